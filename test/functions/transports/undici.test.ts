import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createUndiciUpstream, type UndiciUpstream } from "../../../functions/transports/undici.js";
import { UpstreamConnectError, type UpstreamRequest } from "../../../functions/transports/upstream.js";
import { freePort } from "../../support/redis.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];
const upstreams: UndiciUpstream[] = [];

async function backend(host: string, handler: Handler): Promise<{ ip: string; port: number }> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, host);
  await once(server, "listening");
  return { ip: host, port: (server.address() as AddressInfo).port };
}

function upstream(options: Parameters<typeof createUndiciUpstream>[0] = {}): UndiciUpstream {
  const created = createUndiciUpstream(options);
  upstreams.push(created);
  return created;
}

function request(
  target: { ip: string; port: number },
  fields: Partial<UpstreamRequest> = {},
): UpstreamRequest {
  return {
    target,
    method: "GET",
    path: "/",
    headers: new Headers({ host: "shop.example.test" }),
    body: null,
    signal: new AbortController().signal,
    ...fields,
  };
}

/** Resolves when `predicate` holds, polling; bounded. */
async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

afterEach(async () => {
  for (const created of upstreams.splice(0)) await created.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("undici upstream", () => {
  it.each(["127.0.0.1", "::1"])(
    "sends method, path and headers as is to %s and returns the response",
    async (host) => {
      let seen: { method?: string; url?: string; host?: string; custom?: string } = {};
      const target = await backend(host, (req, res) => {
        seen = {
          method: req.method,
          url: req.url,
          host: req.headers.host,
          custom: req.headers["x-custom"] as string,
        };
        res.setHeader("set-cookie", ["a=1", "b=2"]);
        res.setHeader("x-backend", host);
        res.writeHead(201, "Made It");
        res.end("created");
      });

      const response = await upstream().send(
        request(target, {
          method: "PUT",
          path: "/a/b?c=d",
          headers: new Headers({ host: "shop.example.test", "x-custom": "yes" }),
        }),
      );

      expect(seen).toEqual({ method: "PUT", url: "/a/b?c=d", host: "shop.example.test", custom: "yes" });
      expect(response.status).toBe(201);
      expect(response.statusText).toBe("Made It");
      expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
      expect(response.headers.get("x-backend")).toBe(host);
      expect(await response.text()).toBe("created");
    },
  );

  it("passes redirects through instead of following them", async () => {
    const target = await backend("127.0.0.1", (_req, res) => {
      res.writeHead(302, { location: "http://elsewhere.example.test/" });
      res.end();
    });

    const response = await upstream().send(request(target));

    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("http://elsewhere.example.test/");
  });

  it("streams the request body: the backend sees the first chunk before the second is produced", async () => {
    const received: string[] = [];
    const target = await backend("::1", (req, res) => {
      req.on("data", (chunk: Buffer) => received.push(chunk.toString()));
      req.on("end", () => res.end(received.join("|")));
    });
    let push: ((text: string) => void) | undefined;
    let finish: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (text) => controller.enqueue(new TextEncoder().encode(text));
        finish = () => controller.close();
      },
    });

    const sending = upstream().send(request(target, { method: "POST", body }));
    push?.("first");
    await until(() => received.includes("first"), "the first chunk at the backend");
    push?.("second");
    finish?.();
    const response = await sending;

    expect(await response.text()).toBe("first|second");
  });

  it("streams the response body: the first chunk arrives while the backend still holds the rest", async () => {
    let release: (() => void) | undefined;
    const target = await backend("127.0.0.1", (_req, res) => {
      res.write("head;");
      release = () => res.end("tail");
    });

    const response = await upstream().send(request(target));
    const reader = response.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toBe("head;");
    release?.();
    let rest = "";
    for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read()) {
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toBe("tail");
  });

  it("buffers a small known-length response when asked to, with the same bytes", async () => {
    const target = await backend("127.0.0.1", (_req, res) => {
      res.setHeader("content-length", "5");
      res.end("small");
    });

    const response = await upstream({ bufferResponseBytes: 1024 }).send(request(target));

    expect(await response.text()).toBe("small");
  });

  it.each([
    ["a 204", "GET", 204],
    ["a 304", "GET", 304],
    ["a HEAD answer", "HEAD", 200],
  ])("returns %s with no body", async (_label, method, status) => {
    const target = await backend("127.0.0.1", (_req, res) => {
      res.writeHead(status, { etag: '"x"' });
      res.end();
    });

    const response = await upstream().send(request(target, { method }));

    expect(response.status).toBe(status);
    expect(response.body).toBeNull();
  });

  it.each(["127.0.0.1", "::1"])(
    "rejects with UpstreamConnectError when nothing listens on %s",
    async (host) => {
      const port = await freePort(host);

      const sending = upstream().send(request({ ip: host, port }));

      await expect(sending).rejects.toBeInstanceOf(UpstreamConnectError);
    },
  );

  it("honours the signal while waiting for response headers, and the backend sees the request go away", async () => {
    let closedAtBackend = false;
    let arrived = false;
    const target = await backend("127.0.0.1", (req) => {
      arrived = true;
      req.socket.on("close", () => {
        closedAtBackend = true;
      });
    });
    const abort = new AbortController();

    const sending = upstream().send(request(target, { signal: abort.signal }));
    await until(() => arrived, "the request at the backend");
    abort.abort(new Error("try timeout"));

    await expect(sending).rejects.toThrow();
    await expect(sending).rejects.not.toBeInstanceOf(UpstreamConnectError);
    await until(() => closedAtBackend, "the backend to see the connection close");
  });

  it("fails the response body stream when aborted mid-body", async () => {
    const target = await backend("127.0.0.1", (_req, res) => {
      res.write("partial");
    });
    const abort = new AbortController();

    const response = await upstream().send(request(target, { signal: abort.signal }));
    const reader = response.body?.getReader();
    await reader?.read();
    abort.abort(new Error("client gone"));

    await expect(reader?.read()).rejects.toThrow();
  });

  it("keeps one pool per backend, reuses its connection, and closes idle pools", async () => {
    const sockets = new Set<unknown>();
    const target = await backend("127.0.0.1", (req, res) => {
      sockets.add(req.socket);
      res.end("ok");
    });
    const created = upstream({ idlePoolMs: 50 });

    for (let i = 0; i < 3; i++) {
      await (await created.send(request(target))).text();
      // The socket returns to the pool once undici has parsed the end of the message.
      await new Promise((resolve) => setImmediate(resolve));
    }

    expect(sockets.size).toBe(1);
    expect(created.poolCount()).toBe(1);
    await until(() => created.poolCount() === 0, "the idle pool to close");
  });
});
