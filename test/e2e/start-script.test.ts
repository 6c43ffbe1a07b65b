import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { binomialTail } from "../functions/statistics.js";
import { freePort } from "../support/redis.js";

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A GET with an explicit Host header (fetch forbids setting Host), like the printed curl commands. */
function get(
  port: number,
  path: string,
  host?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, headers: host ? { host, ...headers } : headers, timeout: 10_000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end();
  });
}

/** Resolves with stdout so far once `pattern` shows up in it; rejects if the process exits or time runs out. */
function waitForOutput(child: ChildProcess, output: () => string, pattern: RegExp, timeoutMs: number) {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${pattern} in output within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    const onData = () => {
      if (pattern.test(output())) {
        cleanup();
        resolve(output());
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`start script exited (${code}) before ${pattern}:\n${output()}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
    };
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
    onData();
  });
}

function exitOf(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("start script did not exit after SIGTERM")), timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

const EXAMPLE_PORTS = [18081, 18082, 18083, 18084, 18085, 18086, 18087];

/**
 * examples/ copied with its fixed demo ports (18081-18084) swapped for free ones, so this test never fights a
 * running `npm start` or a parallel run for them. Everything else in the manifests is as shipped.
 */
async function examplesOnFreePorts(): Promise<{ dir: string; port: (fixed: number) => number }> {
  const dir = await mkdtemp(join(tmpdir(), "edgeslice-examples-"));
  const mapping = new Map<number, number>();
  for (const fixed of EXAMPLE_PORTS) mapping.set(fixed, await freePort());
  for (const file of await readdir("examples")) {
    const text = await readFile(join("examples", file), "utf8");
    const remapped = text.replace(/\bport: (\d+)/g, (whole, digits: string) => {
      const free = mapping.get(Number(digits));
      return free === undefined ? whole : `port: ${free}`;
    });
    await writeFile(join(dir, file), remapped);
  }
  tempDirs.push(dir);
  return {
    dir,
    port: (fixed) => {
      const free = mapping.get(fixed);
      if (free === undefined) throw new Error(`examples/ has no port ${fixed}`);
      return free;
    },
  };
}

const tempDirs: string[] = [];

describe("npm start (scripts/start.ts)", () => {
  let child: ChildProcess | undefined;

  afterAll(async () => {
    if (child && child.exitCode === null && child.pid !== undefined) child.kill("SIGTERM");
    for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it("serves the examples over both address families, prints the curls, and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const adminPort = await freePort();
    const examples = await examplesOnFreePorts();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN: "test-token",
      EXAMPLES_DIR: examples.dir,
    };
    // The all-in-one's memory store mode: a REDIS_URL in the test environment would switch it to Redis.
    delete env.REDIS_URL;
    // One node process with tsx as a loader, not the tsx CLI: the CLI relays SIGTERM to a child node and, if
    // that child does not confirm over IPC within 30 ms (easily missed on a loaded machine), SIGKILLs it and
    // exits 143 itself, which would hide the script's exit code (npx likewise dies of the signal it forwards).
    // `timeout` bounds the child's life even if this test process is killed before it can clean up.
    const started = spawn("timeout", ["120", process.execPath, "--import", "tsx", "scripts/start.ts"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = started;
    let stdout = "";
    let stderr = "";
    started.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    started.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });

    const banner = await waitForOutput(started, () => stdout + stderr, /Ctrl-C stops everything/, 30_000);
    expect(banner).toContain(`curl -H 'Host: web.localhost' http://127.0.0.1:${port}/`);
    expect(banner).toContain(`curl -H 'Host: api.localhost' http://127.0.0.1:${port}/`);

    const web = await get(port, "/", "web.localhost");
    const api = await get(port, "/", "api.localhost");
    const apiRepeated = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const answer = await get(port, `/${i}`, "api.localhost");
      apiRepeated.add(/ from (\S+): /.exec(answer.body)?.[1] ?? answer.body);
    }
    const unknown = await get(port, "/", "nothing.localhost");
    const explain = await get(adminPort, "/_edgeslice/explain?host=api.localhost&path=/", undefined, {
      authorization: "Bearer test-token",
    });

    expect(web.status).toBe(200);
    expect(web.body).toContain(`demo/web answered over IPv4 from 127.0.0.1:${examples.port(18081)}`);
    expect(api.status).toBe(200);
    expect(api.body).toContain(`demo/api answered over IPv6 from [::1]:${examples.port(18083)}`);
    // The terminating pod (18084 in examples/) never gets new traffic.
    expect([...apiRepeated]).toEqual([`[::1]:${examples.port(18083)}`]);
    expect(unknown).toEqual({
      status: 404,
      body: expect.stringMatching(/^\{"error":"no_route","requestId":"[\w-]+"\}$/),
    });
    expect(explain.status).toBe(200);
    expect(explain.body).toContain("demo/api");
    // The admin curls the banner prints go to ADMIN_PORT, the only port that answers them.
    const admin = `http://127.0.0.1:${adminPort}`;
    expect(banner).toContain(
      `curl -H 'Authorization: Bearer test-token' '${admin}/_edgeslice/explain?host=web.localhost&path=/'`,
    );
    expect(banner).toContain(`curl -H 'Authorization: Bearer test-token' ${admin}/_edgeslice/metrics`);
    expect(banner).toContain(`dashboard: ${admin}/_edgeslice/ui`);
    expect(
      (await get(port, "/_edgeslice/metrics", undefined, { authorization: "Bearer test-token" })).status,
    ).toBe(404);
    expect(
      (await get(adminPort, "/_edgeslice/metrics", undefined, { authorization: "Bearer test-token" })).status,
    ).toBe(200);

    // examples/03-gateway.yaml: the HTTPRoute's 90/10 split and its header match; 04-ingress.yaml: Prefix
    // and Exact paths of an Ingress. The banner prints a curl for each rule.
    expect(banner).toContain(
      `curl -H 'Host: shop.localhost' http://127.0.0.1:${port}/   # HTTPRoute demo/shop`,
    );
    expect(banner).toContain(
      `curl -H 'Host: docs.localhost' http://127.0.0.1:${port}/guide   # Ingress demo/docs`,
    );
    const answeredBy = (answer: Answer) => /^(\S+) answered/.exec(answer.body)?.[1] ?? String(answer.status);
    const split = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const name = answeredBy(await get(port, "/", "shop.localhost"));
      split.set(name, (split.get(name) ?? 0) + 1);
    }
    // Canary answers ~ Binomial(200, 0.1): off its mean of 20 by 24 or more has probability < 1e-6.
    expect(binomialTail(200, 0.1, 24)).toBeLessThan(1e-6);
    expect([...split.keys()].sort()).toEqual(["demo/shop-canary", "demo/shop-stable"]);
    expect(Math.abs((split.get("demo/shop-canary") ?? 0) - 20)).toBeLessThan(24);
    expect(answeredBy(await get(port, "/", "shop.localhost", { "x-canary": "always" }))).toBe(
      "demo/shop-canary",
    );
    expect(answeredBy(await get(port, "/guide/intro", "docs.localhost"))).toBe("demo/docs");
    expect(answeredBy(await get(port, "/status", "docs.localhost"))).toBe("demo/web");
    expect(answeredBy(await get(port, "/guidebook", "docs.localhost"))).toBe("404");

    started.kill("SIGTERM");
    expect(await exitOf(started, 15_000)).toBe(0);
    expect(stdout).toContain("stopped (SIGTERM)");
  });
});
