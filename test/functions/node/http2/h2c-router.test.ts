import { execFile } from "node:child_process";
import { once } from "node:events";
import { constants } from "node:http2";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { publish, serviceRecord } from "../../fixtures.js";
import { closeAfterEach, startBackend, startNodeRouterOver } from "../../harness.js";
import { metric, rawExchange, until } from "../hostile-kit.js";
import { h2Request, h2Session } from "./h2-client.js";
import { echo, routerToEcho as routerToEchoWith } from "./h2c-kit.js";

/**
 * HTTP/2 clients on the router's cleartext port (h2c with prior knowledge, RFC 9113 §3.3) reach HTTP/1.1
 * backends under every rule HTTP/1.1 clients get: routing by :authority, forwarding headers, hop-by-hop
 * removal, request ids, metrics, the router's own answers, HEAD. HTTP/1.1 on the same port is unchanged.
 */
const closing = closeAfterEach();
const run = promisify(execFile);
const routerToEcho = () => routerToEchoWith(closing);

describe("HTTP/2 clients with prior knowledge on PORT", () => {
  it("routes by :authority and forwards X-Forwarded-*, Forwarded and the client's request id", async () => {
    const { session } = await routerToEcho();
    const answer = await h2Request(session, {
      ":path": "/echo?q=1",
      ":authority": "app.example",
      "x-request-id": "h2-request-1",
      "x-forwarded-for": "203.0.113.9",
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["x-request-id"]).toBe("h2-request-1");
    const seen = JSON.parse(answer.body);
    expect(seen.url).toBe("/echo?q=1");
    expect(seen.headers).toMatchObject({
      host: "app.example",
      // Not a trusted proxy (TRUSTED_PROXIES): the client's own X-Forwarded-For is replaced.
      "x-forwarded-for": "127.0.0.1",
      "x-forwarded-proto": "http",
      "x-forwarded-host": "app.example",
      forwarded: "for=127.0.0.1;host=app.example;proto=http",
      "x-request-id": "h2-request-1",
    });
    // No pseudo-header reaches an HTTP/1.1 backend.
    expect(Object.keys(seen.headers).filter((name) => name.startsWith(":"))).toEqual([]);
  });

  it("sends no connection-specific field either way (RFC 9113 §8.2.2)", async () => {
    const { session } = await routerToEcho();
    const answer = await h2Request(session, {
      ":path": "/",
      ":authority": "app.example",
      te: "trailers",
      "x-answer-with": JSON.stringify([
        ["connection", "x-private"],
        ["keep-alive", "timeout=5"],
        ["x-private", "for this hop"],
        ["x-kept", "yes"],
      ]),
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).headers.te).toBeUndefined();
    expect(answer.headers["x-kept"]).toBe("yes");
    for (const name of ["connection", "keep-alive", "x-private", "transfer-encoding"]) {
      expect(answer.headers[name]).toBeUndefined();
    }
  });

  it("streams a request body to the backend before the client has sent all of it, and the answer back as it comes", async () => {
    let release: (() => void) | undefined;
    const backend = await closing(
      startBackend("127.0.0.1", (req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        req.once("data", () => res.write("got-first "));
        req.on("end", () => {
          res.write("got-all ");
          release = () => res.end("done");
        });
      }),
    );
    const router = await closing(startNodeRouterOver({ config: { retries: 0 } }));
    await publish(
      router.store,
      serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
    );
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    const stream = session.request({ ":path": "/up", ":method": "POST", ":authority": "app.example" });
    stream.setEncoding("utf8");
    const received: string[] = [];
    const next = () => once(stream, "data").then(([chunk]) => received.push(chunk));
    stream.write("a".repeat(100_000));
    await next();
    expect(received.join("")).toBe("got-first ");
    stream.end("b".repeat(100_000));
    while (!received.join("").includes("got-all")) await next();
    release?.();
    stream.resume();
    await once(stream, "end");
  });

  it("answers HEAD with the backend's head and no body", async () => {
    const { session } = await routerToEcho();
    const answer = await h2Request(session, { ":method": "HEAD", ":path": "/", ":authority": "app.example" });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(answer.body).toBe("");
  });

  it("gives the router's own answers over HTTP/2, with their request id, and counts them", async () => {
    const { router, session } = await routerToEcho();
    const before = await metric(router.adminPort, 'edgeslice_requests_total{class="4xx"}');
    const answer = await h2Request(session, { ":path": "/", ":authority": "nobody.example" });
    expect(answer.status).toBe(404);
    const body = JSON.parse(answer.body);
    expect(body.error).toBe("no_route");
    expect(answer.headers["x-request-id"]).toBe(body.requestId);
    expect(await metric(router.adminPort, 'edgeslice_requests_total{class="4xx"}')).toBe(before + 1);
  });

  it("refuses a Host field that names another authority than :authority (RFC 9113 §8.3.1)", async () => {
    const { backend, session } = await routerToEcho();
    const answer = await h2Request(session, {
      ":path": "/",
      ":authority": "app.example",
      host: "other.example",
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toBe("bad_request");
    expect(answer.headers.connection).toBeUndefined();
    expect(backend.seen).toHaveLength(0);
  });

  it("refuses a lower-case :method with 400, as HTTP/1.1's parser refuses `get`, and never forwards it", async () => {
    const { backend, router, session } = await routerToEcho();
    const h2 = await h2Request(session, { ":method": "get", ":path": "/", ":authority": "app.example" });
    expect(h2.status).toBe(400);
    expect(JSON.parse(h2.body).error).toBe("bad_request");
    const h1 = await rawExchange(
      router.port,
      "get / HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n",
    );
    expect(h1.toString("latin1")).toMatch(/^HTTP\/1\.1 400 /);
    expect(backend.seen).toHaveLength(0);
  });

  it("serves many concurrent streams on one connection", async () => {
    const { session } = await routerToEcho();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        h2Request(session, { ":path": `/n/${i}`, ":authority": "app.example" }),
      ),
    );
    expect(answers.map((a) => JSON.parse(a.body).url)).toEqual(
      Array.from({ length: 50 }, (_, i) => `/n/${i}`),
    );
  });

  it("answers curl --http2-prior-knowledge over HTTP/2", async () => {
    const { router } = await routerToEcho();
    const { stdout } = await run("curl", [
      "-sS",
      "--http2-prior-knowledge",
      "--resolve",
      `app.example:${router.port}:127.0.0.1`,
      "-w",
      "\\n%{http_version} %{response_code}",
      `http://app.example:${router.port}/curl`,
    ]);
    const [body, summary] = stdout.split("\n");
    expect(summary).toBe("2 200");
    expect(JSON.parse(body ?? "").headers.host).toBe(`app.example:${router.port}`);
  });

  it("gives up the backend's answer when the client cancels its stream before or during it, and keeps serving", async () => {
    let backendClosed = 0;
    const backend = await closing(
      startBackend("127.0.0.1", (req, res) => {
        req.resume();
        if (!req.url?.startsWith("/stream/")) return void res.end("ok");
        const chunk = Buffer.alloc(16 * 1024, 1);
        let timer: NodeJS.Timeout | undefined;
        // The head comes after the client has cancelled for half of the streams, before for the others.
        const answerAfter = req.url.endsWith("/late") ? 80 : 0;
        const start = setTimeout(() => {
          res.writeHead(200, { "content-type": "application/octet-stream" });
          timer = setInterval(() => res.write(chunk), 2);
        }, answerAfter);
        res.on("close", () => {
          clearTimeout(start);
          clearInterval(timer);
          backendClosed++;
        });
      }),
    );
    const router = await closing(startNodeRouterOver({ config: { retries: 0 } }));
    await publish(
      router.store,
      serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
    );
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    for (let i = 0; i < 6; i++) {
      const late = i % 2 === 0;
      const stream = session.request({
        ":path": `/stream/${i}${late ? "/late" : ""}`,
        ":authority": "app.example",
      });
      stream.on("error", () => undefined);
      if (late) await new Promise((resolve) => setTimeout(resolve, 30));
      else await once(stream, "data");
      stream.close(constants.NGHTTP2_CANCEL);
    }
    await until(() => backendClosed === 6, "every backend answer given up");
    const answer = await h2Request(session, { ":path": "/", ":authority": "app.example" });
    expect(answer).toMatchObject({ status: 200, body: "ok" });
  });

  it("writes access log lines that show the protocol: 2.0 for HTTP/2, 1.1 for HTTP/1.1", async () => {
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(
        ...String(chunk)
          .split("\n")
          .filter((line) => line.includes('"kind":"access"')),
      );
      return true;
    });
    try {
      const backend = await closing(startBackend("127.0.0.1", echo));
      const router = await closing(
        startNodeRouterOver({ config: { retries: 0, accessLog: { enabled: true, sample: 1 } } }),
      );
      await publish(
        router.store,
        serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
      );
      const session = h2Session(router.port);
      closing(Promise.resolve({ close: async () => void session.destroy() }));
      await h2Request(session, { ":path": "/over-h2", ":authority": "app.example" });
      await rawExchange(
        router.port,
        "GET /over-h1 HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n",
      );
      await until(() => lines.length >= 2, "two access log lines");
    } finally {
      write.mockRestore();
    }
    const byPath = new Map(lines.map((line) => JSON.parse(line)).map((entry) => [entry.path, entry]));
    expect(byPath.get("/over-h2")).toMatchObject({ protocol: "2.0", status: 200, host: "app.example" });
    expect(byPath.get("/over-h1")).toMatchObject({ protocol: "1.1", status: 200, host: "app.example" });
  });
});
