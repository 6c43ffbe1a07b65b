import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REDIS_URL } from "../support/redis.js";
import { errorLines, ROOT, runSync } from "./run-sync-cli.js";

const EXAMPLES = join(ROOT, "examples");

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "edgeslice-sync-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** A kubeconfig that loads, for an API server nobody asks: the run ends before the first request. */
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]
users: [{ name: u, user: { token: not-used } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

describe("the sync's command line", () => {
  it("refuses --once without --from with one error line and exit 2, instead of going live", async () => {
    const run = await runSync(["--once"], { CLUSTER_NAME: "east" });

    expect(run.code).toBe(2);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      "--once needs --from DIR: without it the sync watches the cluster until stopped; add --from DIR, or drop --once",
    ]);
    expect(run.stderr).not.toContain("redis target");
  });

  it("refuses a positional argument with one error line and exit 2", async () => {
    const run = await runSync(["examples"], { CLUSTER_NAME: "east" });

    expect(run.code).toBe(2);
    expect(errorLines(run.stderr)).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/^Unexpected argument 'examples': run `node dist\/sync\.js --help`/),
      }),
    ]);
  });
});

describe("the sync's settings", () => {
  it("refuses a REDIS_URL that is no URL at start, with exit 78 and without echoing the value", async () => {
    const run = await runSync(["--from", EXAMPLES, "--once"], { CLUSTER_NAME: "east", REDIS_URL: "hunter2" });

    expect(run.code).toBe(78);
    const [line, ...others] = errorLines(run.stderr);
    expect(others).toEqual([]);
    expect(line?.msg).toMatch(
      /^invalid sync configuration: REDIS_URL is not a URL: write redis:\/\/user:password@host:6379/,
    );
    expect(run.stderr).not.toContain("hunter2");
    expect(run.stderr).not.toContain("redis target");
  });

  it("names a KUBECONFIG that is not YAML in one error line, exit 78, without the file's content", async () => {
    const garbage = file("garbage", "token: s3cret-token\nclusters: [unclosed\n");

    const run = await runSync([], { CLUSTER_NAME: "east", KUBECONFIG: garbage });

    expect(run.code).toBe(78);
    expect(errorLines(run.stderr)).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(
          new RegExp(
            `^KUBECONFIG: ${garbage} is not valid YAML \\(.+ at line 3\\): point KUBECONFIG at a kubeconfig file`,
          ),
        ),
      }),
    ]);
    expect(run.stderr).not.toContain("YAMLException");
    expect(run.stderr).not.toContain("s3cret-token");
  });

  it("names a KUBECONFIG file that does not exist, exit 78", async () => {
    const missing = join(dir, "no-such-kubeconfig");

    const run = await runSync([], { CLUSTER_NAME: "east", KUBECONFIG: missing });

    expect(run.code).toBe(78);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      expect.stringMatching(new RegExp(`^KUBECONFIG: ${missing} does not exist: `)),
    ]);
  });

  it("says there is no kubeconfig outside a pod in one error line naming the fix, exit 78, without contacting anything", async () => {
    const home = mkdtempSync(join(dir, "home-"));

    const run = await runSync([], {
      CLUSTER_NAME: "east",
      KUBECONFIG: undefined,
      HOME: home,
      KUBERNETES_SERVICE_HOST: undefined,
    });

    expect(run.code).toBe(78);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      expect.stringMatching(
        /^no kubeconfig: KUBECONFIG is unset, .+\/\.kube\/config does not exist and this is not a pod .*: set KUBECONFIG/,
      ),
    ]);
    expect(run.stderr).not.toContain("skipTLSVerify");
  });

  it("names SYNC_PORT when its port is taken, exit 78, and does not stay running", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await runSync([], {
        CLUSTER_NAME: "east",
        KUBECONFIG: file("kubeconfig", KUBECONFIG),
        LEADER_ELECTION: "false",
        REDIS_URL,
        SYNC_HOST: "127.0.0.1",
        SYNC_PORT: String(port),
      });

      expect(run.code).toBe(78);
      expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
        `SYNC_PORT=${port}: 127.0.0.1:${port} is already in use (EADDRINUSE): stop the process that holds it, or choose another SYNC_PORT`,
      ]);
    } finally {
      taken.close();
    }
  });
});

describe("the sync's Redis, for --from DIR --once", () => {
  it("says Redis refused the connection at host:port, once, and exits 1 (a retry may work)", async () => {
    const port = await freePort();

    const run = await runSync(["--from", EXAMPLES, "--once"], {
      CLUSTER_NAME: "east",
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });

    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)).toEqual([
      expect.objectContaining({
        msg: `REDIS_URL: Redis at 127.0.0.1:${port} refused the connection (ECONNREFUSED): is Redis running at 127.0.0.1:${port}?`,
        cause: "ECONNREFUSED",
      }),
    ]);
  }, 40_000);

  it("says the credentials were refused, without the password, and exits 78 at once", async () => {
    const url = new URL(REDIS_URL);
    url.username = "edgeslice-nobody";
    url.password = "hunter2";

    const run = await runSync(["--from", EXAMPLES, "--once"], { CLUSTER_NAME: "east", REDIS_URL: url.href });

    expect(run.code).toBe(78);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      `REDIS_URL: Redis at ${url.hostname}:${url.port || 6379} refused the credentials (WRONGPASS): check the ACL user and password in REDIS_URL (redis://user:password@host:port)`,
    ]);
    expect(run.stderr).not.toContain("hunter2");
  });
});
