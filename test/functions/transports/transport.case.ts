import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createRawServer, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isConnectFailure } from "../../../functions/transports/connect-errors.js";
import type { UpstreamRequest, UpstreamTarget } from "../../../functions/transports/upstream.js";
import { eventually } from "../../support/eventually.js";
import { freePort } from "../../support/redis.js";

/**
 * One transport as the contract suite drives it: the web path's `Upstream.send` shape (a Response back, the
 * body streaming), whatever the transport's own API is.
 */
export interface TransportDriver {
  send(request: UpstreamRequest): Promise<Response>;
  /** Where this transport legitimately differs from the others; each case asserts the transport's own way. */
  readonly differs: {
    /**
     * What reaches the backend as Host: the request's own, or the target's authority (the Fetch standard
     * makes Host a forbidden request header, so fetch sends the URL's).
     */
    readonly host: "as sent" | "target authority";
    /**
     * A status code past 599 (RFC 9110 §15 defines 100-599): refused as a malformed answer, or handed on as
     * read (Node's fetch does; the router's web path then answers with what it can make of it).
     */
    readonly statusPast599: "refused" | "handed on";
  };
  /** Destroys every connection the transport holds. */
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Host = "127.0.0.1" | "::1";

const WAIT_MS = 5_000;
const until = (condition: () => boolean, what: string) => eventually(condition, WAIT_MS, what);

/**
 * The behaviour every transport shares (the own HTTP/1.1 client through node/backend-pools.ts, undici,
 * fetch), run against the transport `makeDriver` gives (a fresh one per case), in the manner of the store's
 * contract suite (test/store/store.case.ts): one function of cases, one small test file per transport.
 */
export function describeTransportContract(transportName: string, makeDriver: () => TransportDriver): void {
  describe(`the transport contract on ${transportName}`, () => {
    let driver: TransportDriver;
    const closers: (() => Promise<void>)[] = [];
    beforeEach(() => {
      driver = makeDriver();
    });
    afterEach(async () => {
      await driver.close();
      for (const close of closers.splice(0).reverse()) await close();
    });

    const backend = async (host: Host, handler: Handler): Promise<UpstreamTarget> => {
      const server = createServer(handler);
      closers.push(() => closeServer(server));
      server.listen(0, host);
      await once(server, "listening");
      return { ip: host, port: (server.address() as AddressInfo).port };
    };

    /** A backend writing raw bytes: `answer` gets the socket once a request head arrived. */
    const rawBackend = async (answer: (socket: Socket) => void): Promise<UpstreamTarget> => {
      const sockets = new Set<Socket>();
      const server = createRawServer((socket) => {
        sockets.add(socket);
        socket.on("error", () => undefined);
        let pending = "";
        socket.on("data", (chunk: Buffer) => {
          pending += chunk.toString("latin1");
          for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
            pending = pending.slice(end + 4);
            answer(socket);
          }
        });
      });
      closers.push(async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      return { ip: "127.0.0.1", port: (server.address() as AddressInfo).port };
    };

    const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
      try {
        await promise;
      } catch (error) {
        return error;
      }
      throw new Error("expected a rejection");
    };

    it.each<Host>(["127.0.0.1", "::1"])(
      "sends method, path and headers as given to %s and returns status, reason, fields and body",
      async (host) => {
        let seen: Record<string, unknown> = {};
        const target = await backend(host, (req, res) => {
          seen = {
            method: req.method,
            url: req.url,
            host: req.headers.host,
            custom: req.headers["x-custom"],
          };
          res.setHeader("set-cookie", ["a=1", "b=2"]);
          res.writeHead(201, "Made It");
          res.end("created");
        });

        const response = await driver.send(
          upstreamRequest(target, {
            method: "PUT",
            path: "/a/b?c=d",
            headers: new Headers({ host: "shop.example.test", "x-custom": "yes" }),
          }),
        );

        const authority = host === "::1" ? `[::1]:${target.port}` : `${host}:${target.port}`;
        const expectedHost = driver.differs.host === "as sent" ? "shop.example.test" : authority;
        expect(seen).toEqual({ method: "PUT", url: "/a/b?c=d", host: expectedHost, custom: "yes" });
        expect(response.status).toBe(201);
        expect(response.statusText).toBe("Made It");
        expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
        expect(await response.text()).toBe("created");
      },
    );

    it("relays a redirect as the backend's answer instead of following it", async () => {
      let requests = 0;
      const target = await backend("127.0.0.1", (_req, res) => {
        requests++;
        res.writeHead(302, { location: "/elsewhere" });
        res.end();
      });

      const response = await driver.send(upstreamRequest(target));

      expect([response.status, response.headers.get("location"), requests]).toEqual([302, "/elsewhere", 1]);
    });

    it("streams the request body: the backend sees the first chunk before the second is produced", async () => {
      const received: string[] = [];
      const target = await backend("::1", (req, res) => {
        req.on("data", (chunk: Buffer) => received.push(chunk.toString()));
        req.on("end", () => res.end(received.join("|")));
      });
      let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start: (given) => {
          controller = given;
        },
      });

      const sending = driver.send(upstreamRequest(target, { method: "POST", body }));
      controller?.enqueue(new TextEncoder().encode("first"));
      await until(() => received.includes("first"), "the first chunk at the backend");
      controller?.enqueue(new TextEncoder().encode("second"));
      controller?.close();

      expect(await (await sending).text()).toBe("first|second");
    });

    it("streams the response body: the first chunk arrives while the backend still holds the rest", async () => {
      let release: (() => void) | undefined;
      const target = await backend("127.0.0.1", (_req, res) => {
        res.write("head;");
        release = () => res.end("tail");
      });

      const response = await driver.send(upstreamRequest(target));
      const reader = response.body?.getReader();
      const first = await reader?.read();
      expect(new TextDecoder().decode(first?.value)).toBe("head;");
      release?.();
      expect(await readRest(reader)).toBe("tail");
    });

    it.each<Host>(["127.0.0.1", "::1"])(
      "fails a refused connect to %s as a connect failure",
      async (host) => {
        const port = await freePort(host);

        const error = await rejection(driver.send(upstreamRequest({ ip: host, port })));

        expect(isConnectFailure(error)).toBe(true);
      },
    );

    it("ends a request aborted while waiting for the head, not as a connect failure, and the backend sees it go", async () => {
      let arrived = false;
      let closedAtBackend = false;
      const target = await backend("127.0.0.1", (req) => {
        arrived = true;
        req.socket.on("close", () => {
          closedAtBackend = true;
        });
      });
      const abort = new AbortController();

      const sending = driver.send(upstreamRequest(target, { signal: abort.signal }));
      await until(() => arrived, "the request at the backend");
      abort.abort(new Error("try timeout"));

      expect(isConnectFailure(await rejection(sending))).toBe(false);
      await until(() => closedAtBackend, "the backend to see the connection close");
    });

    it("fails the response body when the request is aborted mid-body", async () => {
      const target = await backend("127.0.0.1", (_req, res) => {
        res.write("partial");
      });
      const abort = new AbortController();

      const response = await driver.send(upstreamRequest(target, { signal: abort.signal }));
      const reader = response.body?.getReader();
      await reader?.read();
      abort.abort(new Error("client gone"));

      await expect(readRest(reader)).rejects.toThrow();
    });

    it("fails the response body when the backend resets the connection mid-body", async () => {
      const target = await rawBackend((socket) => {
        socket.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial", () => socket.resetAndDestroy());
      });

      const response = await driver.send(upstreamRequest(target));

      await expect(response.text()).rejects.toThrow();
    });

    it("sends requests one after another over one kept-alive connection", async () => {
      const sockets = new Set<unknown>();
      const target = await backend("127.0.0.1", (req, res) => {
        sockets.add(req.socket);
        res.end("ok");
      });

      for (let i = 0; i < 3; i++) {
        expect(await (await driver.send(upstreamRequest(target))).text()).toBe("ok");
        // The connection goes back to its pool once the transport has read the end of the message.
        await new Promise((resolve) => setImmediate(resolve));
      }

      expect(sockets.size).toBe(1);
    });

    it.each([
      ["a 204", "GET", "HTTP/1.1 204 No Content\r\n\r\n", 204],
      ["a 304", "GET", 'HTTP/1.1 304 Not Modified\r\netag: "x"\r\ncontent-length: 5\r\n\r\n', 304],
      ["an answer to HEAD", "HEAD", "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n", 200],
    ])("returns %s with no body (RFC 9110 §6.4.1)", async (_label, method, answer, status) => {
      const target = await rawBackend((socket) => socket.write(answer));

      const response = await driver.send(upstreamRequest(target, { method }));

      expect(response.status).toBe(status);
      expect(response.body).toBeNull();
    });

    it("refuses a status code past 599 (RFC 9110 §15: 100-599), or hands it on where the transport says so", async () => {
      const target = await rawBackend((socket) =>
        socket.write("HTTP/1.1 600 Beyond\r\ncontent-length: 0\r\n\r\n"),
      );

      const sending = driver.send(upstreamRequest(target));

      if (driver.differs.statusPast599 === "handed on") {
        expect((await sending).status).toBe(600);
      } else {
        expect(isConnectFailure(await rejection(sending))).toBe(false);
      }
    });
  });
}

/** A GET of `/` for shop.example.test to `target`, with `fields` in place of those. */
export function upstreamRequest(
  target: UpstreamTarget,
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

async function readRest(reader: ReadableStreamDefaultReader<Uint8Array> | undefined): Promise<string> {
  let rest = "";
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read()) {
    rest += new TextDecoder().decode(chunk.value);
  }
  return rest;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
