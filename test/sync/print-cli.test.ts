import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { printLines } from "../../sync/print.js";
import type { KubeEndpointSlice, KubeService } from "../../sync/translate/kube-objects.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const FIXTURE = join(ROOT, "test/fixtures/manifests");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the sync CLI as users do, bounded so a hang fails the test instead of the run. */
function runSync(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve) => {
    const childEnv = { ...process.env, ...env };
    for (const [key, value] of Object.entries(env)) if (value === undefined) delete childEnv[key];
    execFile(
      "npx",
      ["tsx", "sync/main.ts", ...args],
      { cwd: ROOT, env: childEnv, timeout: 20_000, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const EMPTY = { endpoints: [], fallback: false, draining: [] };

describe("npm run sync -- --from DIR --print", () => {
  it("prints one contract line per Service port and reports skipped manifests on stderr", async () => {
    const run = await runSync(["--from", FIXTURE, "--print"], { CLUSTER_NAME: "east" });
    expect(run.code).toBe(0);
    const expected = [
      { service: "other/web", port: 80, ipv4: { endpoints: ["10.2.0.1:80"], fallback: false, draining: [] } },
      {
        service: "shop/dns",
        port: 53,
        ipv4: { endpoints: ["10.0.1.1:5353", "10.1.1.1:5353"], fallback: false, draining: [] },
      },
      {
        service: "shop/dns",
        port: 53,
        ipv4: { endpoints: ["10.0.1.1:5354"], fallback: false, draining: [] },
      },
      { service: "shop/empty", port: 80, ipv4: EMPTY },
      {
        service: "shop/web",
        port: 80,
        ipv4: {
          endpoints: ["10.0.0.9:8080", "10.0.0.10:8080", "10.0.0.11:8080", "10.0.0.12:8080"],
          fallback: false,
          draining: [],
        },
        ipv6: {
          endpoints: ["[fd00::a]:8080", "[fd00::b]:8080"],
          fallback: true,
          draining: ["[fd00::a]:8080", "[fd00::b]:8080"],
        },
      },
      {
        service: "shop/web",
        port: 443,
        ipv4: {
          endpoints: ["10.0.0.9:8443", "10.0.0.10:8443"],
          fallback: false,
          draining: ["10.0.0.11:8443"],
        },
      },
    ].map((line) =>
      JSON.stringify({
        cluster: "east",
        service: line.service,
        port: line.port,
        ipv4: line.ipv4,
        ipv6: line.ipv6 ?? EMPTY,
      }),
    );
    // Then one line per route: shop/web is the fixture's one annotated Service.
    const route = JSON.stringify({
      cluster: "east",
      route: "annotation:shop/web",
      source: "annotation",
      createdAt: 0,
      hostnames: ["shop.example"],
      wildcard: "one-label",
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
          filters: {},
          backends: [{ service: "shop/web", port: 80, weight: 1 }],
        },
      ],
    });
    expect(run.stdout.split("\n")).toEqual([...expected, route, ""]);

    const logged = run.stderr
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { level: string; msg: string; file: string; path: string; error: string },
      );
    const problems = logged.filter((line) => line.msg === "skipped manifest");
    expect(problems.map(({ level, file, path }) => ({ level, file, path }))).toEqual([
      { level: "warn", file: "bad-objects.yaml", path: "items[1]" },
      { level: "warn", file: "bad-objects.yaml", path: "items[2]" },
      { level: "warn", file: "broken.json", path: "(root)" },
      { level: "warn", file: "broken.yaml", path: "(root)" },
    ]);
    for (const problem of problems) expect(problem.error.length).toBeGreaterThan(0);
  });

  it("labels the lines with cluster local when CLUSTER_NAME is unset", async () => {
    const run = await runSync(["--from", FIXTURE, "--print"], { CLUSTER_NAME: undefined });
    expect(run.code).toBe(0);
    const clusters = run.stdout
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { cluster: string }).cluster);
    expect(new Set(clusters)).toEqual(new Set(["local"]));
  });

  it("exits 1 with a JSON error when the folder cannot be read", async () => {
    const run = await runSync(["--from", join(FIXTURE, "no-such-folder"), "--print"], {});
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(JSON.parse(run.stderr.trim())).toMatchObject({
      level: "error",
      msg: "cannot read manifest folder",
    });
  });

  it("exits 2 with usage for an unknown flag", async () => {
    const run = await runSync(["--frm", FIXTURE], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Unknown option");
    expect(run.stderr).toContain("Usage:");
  });

  it("exits 2 for an invalid CLUSTER_NAME", async () => {
    const run = await runSync(["--from", FIXTURE, "--print"], { CLUSTER_NAME: "East_1" });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("CLUSTER_NAME");
  });

  it("prints usage with --help", async () => {
    const run = await runSync(["--help"], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--from DIR");
  });
});

describe("printLines", () => {
  const service = (
    namespace: string,
    name: string,
    ports: { name?: string; port: number }[],
  ): KubeService => ({
    metadata: { name, namespace },
    spec: { ports },
  });
  const slice: KubeEndpointSlice = {
    metadata: { name: "b-1", namespace: "ns", labels: { "kubernetes.io/service-name": "b" } },
    addressType: "IPv6",
    ports: [{ name: "", port: 8080 }],
    endpoints: [{ addresses: ["FD00::2"] }, { addresses: ["fd00::1"] }],
  };

  it("sorts lines by service then port and keeps the contract's key order", () => {
    const lines = printLines(
      "east",
      [
        service("ns", "b", [{ port: 80 }]),
        service("ns", "a", [
          { name: "y", port: 9000 },
          { name: "x", port: 81 },
        ]),
      ],
      [slice],
    );
    expect(lines.map((line) => Object.keys(JSON.parse(line) as object))).toEqual(
      Array(3).fill(["cluster", "service", "port", "ipv4", "ipv6"]),
    );
    expect(lines.map((line) => JSON.parse(line) as { service: string; port: number })).toMatchObject([
      { service: "ns/a", port: 81 },
      { service: "ns/a", port: 9000 },
      { service: "ns/b", port: 80, ipv6: { endpoints: ["[fd00::1]:8080", "[fd00::2]:8080"] } },
    ]);
  });

  it("prints nothing for no Services", () => {
    expect(printLines("east", [], [slice])).toEqual([]);
  });
});
