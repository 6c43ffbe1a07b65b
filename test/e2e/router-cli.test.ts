import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NO_GRANTS_WARNING } from "../../functions/core/trust/cluster-grants.js";
import { freePort, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { type CliRun, errorLines, logLines, ROOT } from "../sync/run-sync-cli.js";

/** `npm run router` with `env` added, to its end (bounded: a router that keeps running fails the test). */
function runRouter(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "functions/node/main.ts", ...args],
      {
        cwd: ROOT,
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...env },
        timeout: 20_000,
        killSignal: "SIGKILL",
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

interface RunningRouter {
  readonly url: string;
  /** Resolves with the first log line that `matches`; rejects if the router exits first. */
  line(matches: (line: { level: string; msg: string }) => boolean): Promise<{ level: string; msg: string }>;
  output(): string;
}

const running: ChildProcess[] = [];
afterEach(async () => {
  for (const child of running.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  }
});

/** `npm run router` left running, once it listens. */
async function startRouter(env: Record<string, string>): Promise<RunningRouter> {
  const child = spawn(process.execPath, ["--import", "tsx", "functions/node/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", EDGESLICE_PREFIX: uniquePrefix("cli"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let output = "";
  const waiting = new Set<() => void>();
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
    for (const check of waiting) check();
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const line: RunningRouter["line"] = (matches) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = logLines(output.slice(0, output.lastIndexOf("\n") + 1)).find(matches);
        if (!found) return;
        waiting.delete(check);
        resolve(found);
      };
      waiting.add(check);
      child.once("exit", (code) => reject(new Error(`the router exited (${code}):\n${output}`)));
      check();
    });
  const listening = await line((entry) => entry.msg === "router listening");
  return { url: String((listening as { url?: unknown }).url), line, output: () => output };
}

describe("the router's command line", () => {
  it("prints its usage for --help and exits 0 without starting", async () => {
    const run = await runRouter(["--help"], {});

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: node dist\/router\.js/);
    expect(run.stdout).not.toContain("router listening");
  });

  it("refuses an unknown flag with one error line and exit 2", async () => {
    const run = await runRouter(["--port", "80"], {});

    expect(run.code).toBe(2);
    expect(errorLines(run.stdout).map((line) => line.msg)).toEqual([
      "Unknown option '--port': run `node dist/router.js --help` for the options it takes",
    ]);
    expect(run.stdout).not.toContain("router listening");
  });
});

describe("the router's settings", () => {
  it("refuses a bad variable with one error line and exit 78", async () => {
    const run = await runRouter([], { IP_FAMILY: "IPv5" });

    expect(run.code).toBe(78);
    expect(errorLines(run.stdout).map((line) => line.msg)).toEqual([
      "invalid router configuration: IP_FAMILY must be one of PreferIPv4, PreferIPv6, IPv4, IPv6",
    ]);
  });

  it("refuses a REDIS_URL that is no URL, without echoing it, exit 78", async () => {
    const run = await runRouter([], { REDIS_URL: "hunter2" });

    expect(run.code).toBe(78);
    expect(errorLines(run.stdout).map((line) => line.msg)).toEqual([
      expect.stringMatching(/^invalid router configuration: REDIS_URL is not a URL: write redis:\/\//),
    ]);
    expect(run.stdout).not.toContain("hunter2");
  });

  it("names HOST when it is no IP address, in one line without a stack trace, exit 78", async () => {
    const run = await runRouter([], { HOST: "999.1.1.1", REDIS_URL });

    expect(run.code).toBe(78);
    expect(errorLines(run.stdout).map((line) => line.msg)).toEqual([
      "HOST=999.1.1.1 is not an IP address: set it to 0.0.0.0 (every IPv4 address), :: (every address) or one of this machine's addresses",
    ]);
    expect(run.stderr).toBe("");
  });

  it("names PORT when its port is taken, in one line, exit 78", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await runRouter([], { PORT: String(port), REDIS_URL });

      expect(run.code).toBe(78);
      expect(errorLines(run.stdout).map((line) => line.msg)).toEqual([
        `PORT=${port}: 127.0.0.1:${port} is already in use (EADDRINUSE): stop the process that holds it, or choose another PORT`,
      ]);
      expect(run.stderr).toBe("");
    } finally {
      taken.close();
    }
  });

  it("names ADMIN_PORT when the admin listener's port is taken, in one line, exit 78", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await runRouter([], { ADMIN_PORT: String(port), REDIS_URL });

      expect(run.code).toBe(78);
      expect(errorLines(run.stdout).map((line) => line.msg)).toEqual([
        `ADMIN_PORT=${port}: 127.0.0.1:${port} is already in use (EADDRINUSE): stop the process that holds it, or choose another ADMIN_PORT`,
      ]);
      expect(run.stderr).toBe("");
    } finally {
      taken.close();
    }
  });
  it("names HTTPS_PORT when the HTTPS listener's port is taken, in one line, exit 78", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const key = Buffer.alloc(32, 1).toString("base64");
      const run = await runRouter([], { HTTPS_PORT: String(port), TLS_STORE_KEY: key, REDIS_URL });

      expect(run.code).toBe(78);
      expect(errorLines(run.stdout).map((line) => line.msg)).toEqual([
        `HTTPS_PORT=${port}: 127.0.0.1:${port} is already in use (EADDRINUSE): stop the process that holds it, or choose another HTTPS_PORT`,
      ]);
    } finally {
      taken.close();
    }
  });
});

describe("the router with its Redis unreachable", () => {
  it("says once, at error level, that Redis refused the connection, and stays alive but not ready", async () => {
    const port = await freePort();
    const router = await startRouter({ REDIS_URL: `redis://127.0.0.1:${port}` });

    const refused = await router.line((line) => line.level === "error");
    const live = await fetch(`${router.url}/_edgeslice/livez`);
    const ready = await fetch(`${router.url}/_edgeslice/healthz`);

    expect(refused.msg).toBe(
      `REDIS_URL: Redis at 127.0.0.1:${port} refused the connection (ECONNREFUSED): is Redis running at 127.0.0.1:${port}?`,
    );
    expect({ status: live.status, body: await live.json() }).toEqual({
      status: 200,
      body: { status: "alive" },
    });
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: "no_snapshot" });
    // What follows from the outage (the first load, the change feed) is a warning each, once: the cause is the
    // one error line, and none of them repeats ioredis's own words about its connection.
    await router.line((line) => line.msg === "initial store load failed; retrying in the background");
    await router.line((line) => line.msg === "change feed interrupted; will resume");
    const lines = logLines(router.output());
    expect(errorLines(router.output())).toEqual([refused]);
    expect(router.output()).not.toMatch(/Stream isn't writeable|enableOfflineQueue|maxRetriesPerRequest/);
    expect(lines.filter((line) => line.level === "warn").map((line) => [line.msg, line.redis])).toEqual([
      [NO_GRANTS_WARNING, undefined],
      [
        "initial store load failed; retrying in the background",
        "unreachable (the error line before says why)",
      ],
      ["change feed interrupted; will resume", "unreachable (the error line before says why)"],
    ]);
  });

  it("says at error level that the credentials were refused, without the password", async () => {
    const url = new URL(REDIS_URL);
    url.username = "edgeslice-nobody";
    url.password = "hunter2";
    const router = await startRouter({ REDIS_URL: url.href });

    const refused = await router.line((line) => line.level === "error");

    expect(refused.msg).toBe(
      `REDIS_URL: Redis at ${url.hostname}:${url.port || 6379} refused the credentials (WRONGPASS): check the ACL user and password in REDIS_URL (redis://user:password@host:port)`,
    );
    expect(router.output()).not.toContain("hunter2");
  });
});
