import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { freePort } from "../../support/redis.js";
import { endpointOn, ep, publish, serviceRecord } from "../fixtures.js";
import {
  type Backend,
  closeAfterEach,
  type Router,
  send,
  startBackend,
  startNodeRouterOver,
} from "../harness.js";

/**
 * Semantics only the Node fast path (node/proxy.ts through startNodeRouter) has to get right on its own:
 * client aborts, body errors, HEAD, bodies over IPv6. The shared ones run on both paths in app.test.ts.
 */
const closing = closeAfterEach();

function backend(...args: Parameters<typeof startBackend>): Promise<Backend> {
  return closing(startBackend(...args));
}

function router(...args: Parameters<typeof startNodeRouterOver>): Promise<Router> {
  return closing(startNodeRouterOver(...args));
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each(["127.0.0.1", "::1"] as const)("node fast path to a backend on %s", (family) => {
  it("streams a request body to the backend and its answer back", async () => {
    const b = await backend(family, (req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => res.end(`got ${body}`));
    });
    const r = await router();
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        ...endpointOn(b),
      }),
    );
    const res = await send(r.port, { method: "PUT", path: "/items/1", body: "x".repeat(100_000) });
    expect([res.status, res.body.length]).toEqual([200, 4 + 100_000]);
  });

  it("a client that goes away while waiting for headers makes the upstream request go away", async () => {
    let backendSawClose = false;
    let arrived = false;
    const b = await backend(family, (req) => {
      arrived = true;
      req.socket.on("close", () => {
        backendSawClose = true;
      });
    });
    const r = await router();
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        ...endpointOn(b),
      }),
    );
    const client = request({ host: "127.0.0.1", port: r.port, path: "/", headers: { host: "app.example" } });
    client.on("error", () => undefined);
    client.end();
    await until(() => arrived, "the request at the backend");
    client.destroy();
    await until(() => backendSawClose, "the backend to see the upstream request go away");
  });

  it("a client that goes away mid-response makes the backend's response stream close", async () => {
    let backendSawClose = false;
    const b = await backend(family, (_req, res) => {
      res.write("first,");
      res.on("close", () => {
        backendSawClose = true;
      });
    });
    const r = await router();
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        ...endpointOn(b),
      }),
    );
    await new Promise<void>((resolve, reject) => {
      const client = request(
        { host: "127.0.0.1", port: r.port, path: "/", headers: { host: "app.example" } },
        (res) => {
          res.once("data", () => {
            client.destroy();
            resolve();
          });
        },
      );
      client.on("error", () => undefined);
      client.on("close", () => resolve());
      client.on("timeout", () => reject(new Error("no first chunk")));
      client.setTimeout(5_000);
      client.end();
    });
    await until(() => backendSawClose, "the backend's response to close");
  });
});

describe("node fast path", () => {
  it("ends the client's response abruptly when the backend fails mid-body (never a clean truncated end)", async () => {
    const b = await backend("127.0.0.1", (_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("partial");
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep(b.host, b.port)] }));
    const outcome = await new Promise<string>((resolve) => {
      const client = request(
        { host: "127.0.0.1", port: r.port, path: "/", headers: { host: "app.example" } },
        (res) => {
          res.on("data", () => undefined);
          res.on("end", () => resolve("clean end"));
          res.on("error", () => resolve("aborted"));
          res.on("aborted", () => resolve("aborted"));
        },
      );
      client.on("error", () => resolve("aborted"));
      client.end();
    });
    expect(outcome).toBe("aborted");
  });

  it("answers HEAD with the backend's headers and no body", async () => {
    const b = await backend("127.0.0.1", (req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "x-app": "1", "content-length": "5" });
      res.end(req.method === "HEAD" ? undefined : "hello");
    });
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep(b.host, b.port)] }));
    const res = await send(r.port, { method: "HEAD" });
    expect([res.status, res.headers["x-app"], res.body]).toEqual([200, "1", ""]);
    expect(b.seen.map((s) => s.method)).toEqual(["HEAD"]);
  });

  it("answers 204 and 304 with no body", async () => {
    const b = await backend("127.0.0.1", (req, res) => {
      res.writeHead(req.url === "/none" ? 204 : 304, { etag: '"v1"' });
      res.end();
    });
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep(b.host, b.port)] }));
    const none = await send(r.port, { path: "/none" });
    const same = await send(r.port, { path: "/same" });
    expect([none.status, none.body, same.status, same.body, same.headers.etag]).toEqual([
      204,
      "",
      304,
      "",
      '"v1"',
    ]);
  });

  it("sends a POST body whole to the next backend after a connect failure on [::1]", async () => {
    const live = await backend("::1", (req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => res.end(`got ${body}`));
    });
    const dead = ep("::1", await freePort());
    const r = await router({
      random: () => 0,
      ejection: { consecutiveFailures: 1_000 },
      config: { ipFamily: "IPv6" },
    });
    await publish(r.store, serviceRecord({ cluster: "a", ipv6: [dead, ep(live.host, live.port)] }));
    const res = await send(r.port, {
      method: "POST",
      body: "payload",
      headers: { "content-type": "text/plain" },
    });
    expect([res.status, res.body]).toEqual([200, "got payload"]);
    expect(live.seen[0]?.headers["x-forwarded-for"]).toBe("127.0.0.1");
  });

  it("counts natively sent responses in the metrics", async () => {
    const b = await backend("127.0.0.1");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep(b.host, b.port)] }));
    for (let i = 0; i < 3; i++) expect((await send(r.port, {})).status).toBe(200);
    const metrics = await send(r.adminPort, {
      path: "/_edgeslice/metrics",
      headers: { authorization: "Bearer secret-token" },
    });
    expect(metrics.body).toContain('edgeslice_requests_total{class="2xx"} 3');
  });

  it("relays long bodies whole, byte for byte, to a client that reads them slowly and to one that keeps up", async () => {
    // Every byte says where it is, so a chunk overwritten by a later read of the backend's socket would show.
    const body = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7 + (i >> 16)) % 251;
    const b = await backend("127.0.0.1", (_req, res) => {
      res.writeHead(200, { "content-length": String(body.length) });
      // In pieces, so the router reads the body over many reads.
      let at = 0;
      const next = () => {
        if (at >= body.length) return void res.end();
        const piece = body.subarray(at, at + 48 * 1024);
        at += piece.length;
        if (res.write(piece)) setImmediate(next);
        else res.once("drain", next);
      };
      next();
    });
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep(b.host, b.port)] }));
    const fetchBody = (slow: boolean) =>
      new Promise<Buffer>((resolve, reject) => {
        const client = request(
          { host: "127.0.0.1", port: r.port, path: "/", headers: { host: "app.example" } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => {
              chunks.push(chunk);
              if (!slow) return;
              // Reading stops now and then, long enough for the kernel's buffers to fill: the router's
              // writes to this client then wait in its socket.
              res.pause();
              setTimeout(() => res.resume(), chunks.length % 16 === 1 ? 50 : 1);
            });
            res.on("end", () => resolve(Buffer.concat(chunks)));
            res.on("error", reject);
          },
        );
        client.on("error", reject);
        client.end();
      });
    const [slow, fast] = await Promise.all([fetchBody(true), fetchBody(false)]);
    expect(slow.equals(body)).toBe(true);
    expect(fast.equals(body)).toBe(true);
  });
});
