import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { publish, serviceRecord } from "../fixtures.js";
import {
  type Backend,
  closeAfterEach,
  ROUTER_KINDS,
  type Router,
  type RouterOptions,
  startBackend,
  startRouterOf,
} from "../harness.js";
import { metric, statusLineOf } from "./hostile-kit.js";

/**
 * Envoy's model for upload time: the per-try and total timeouts start once the whole request was sent
 * upstream, so a client slow to send its body is never charged to the backend (no 504, no ejection); a client
 * that stops sending is answered 408 after CLIENT_BODY_IDLE_TIMEOUT_MS, still without blaming the backend.
 */
const closing = closeAfterEach();

const echo: Parameters<typeof startBackend>[1] = (req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (c: string) => (body += c));
  req.on("end", () => res.end(`got ${body}`));
};

async function setUp(kind: (typeof ROUTER_KINDS)[number], options: RouterOptions, handler = echo) {
  const b: Backend = await closing(startBackend("127.0.0.1", handler));
  const r: Router = await closing(startRouterOf(kind, options));
  await publish(r.store, serviceRecord({ cluster: "a", ipv4: [{ ip: b.host, port: b.port }] }));
  return { b, r };
}

/** POSTs `body` one byte every `gapMs` on a raw socket (stopping after `sendBytes` if given); the reply. */
function trickle(port: number, body: string, gapMs: number, sendBytes = body.length): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (reply += chunk));
    socket.on("close", () => {
      clearInterval(timer);
      resolve(reply);
    });
    socket.on("error", (error) => (reply ? resolve(reply) : reject(error)));
    socket.write(
      `POST /up HTTP/1.1\r\nhost: app.example\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`,
    );
    let sent = 0;
    timer = setInterval(() => {
      if (sent >= sendBytes) return clearInterval(timer);
      socket.write(body[sent++] ?? "");
    }, gapMs);
  });
}

describe.each(ROUTER_KINDS)("%s: a slow upload", (kind) => {
  it("is not charged to the backend: a body trickling for longer than both timeouts gets through", async () => {
    const { r } = await setUp(kind, { config: { tryTimeoutMs: 200, totalTimeoutMs: 300, retries: 0 } });
    const reply = await trickle(r.port, "0123456789", 60);
    expect(statusLineOf(Buffer.from(reply, "latin1"))).toBe("HTTP/1.1 200 OK");
    expect(reply).toMatch(/got 0123456789$/);
    expect(await metric(r.adminPort, 'edgeslice_upstream_errors_total{kind="timeout"}')).toBe(0);
  });

  it("that stalls is answered 408 after the body idle timeout, and the backend is never ejected", async () => {
    const { r } = await setUp(kind, {
      config: { tryTimeoutMs: 5_000, clientBodyIdleTimeoutMs: 200, retries: 0 },
      ejection: { consecutiveFailures: 2 },
    });
    for (let i = 0; i < 3; i++) {
      const reply = await trickle(r.port, "0123456789", 10, 3);
      expect(statusLineOf(Buffer.from(reply, "latin1"))).toBe("HTTP/1.1 408 Request Timeout");
      expect(reply).toMatch(/\{"error":"request_timeout","requestId":"[\w-]+"\}$/);
    }
    expect(await metric(r.adminPort, "edgeslice_ejected_backends")).toBe(0);
    expect(await metric(r.adminPort, 'edgeslice_upstream_errors_total{kind="timeout"}')).toBe(0);
    expect(await metric(r.adminPort, "edgeslice_in_flight_requests")).toBe(0);
  });
});

describe("node fast path: a backend that stops reading the body", () => {
  it("gets a try timeout (504) rather than holding the upload forever", async () => {
    const { r } = await setUp(
      "node fast path (startNodeRouter)",
      { config: { tryTimeoutMs: 300, clientBodyIdleTimeoutMs: 60_000, retries: 0 } },
      () => undefined,
    );
    const reply = await new Promise<string>((resolve) => {
      const socket = connect(r.port, "127.0.0.1");
      const size = 64 * 1024 * 1024;
      let text = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => {
        text += chunk;
        if (text.includes("\r\n\r\n")) {
          resolve(text);
          socket.destroy();
        }
      });
      socket.on("close", () => resolve(text));
      socket.on("error", () => resolve(text));
      socket.write(`POST /up HTTP/1.1\r\nhost: app.example\r\ncontent-length: ${size}\r\n\r\n`);
      const chunk = Buffer.alloc(1024 * 1024, 120);
      let written = 0;
      const pump = () => {
        while (written < size && !socket.destroyed) {
          written += chunk.length;
          if (!socket.write(chunk)) return socket.once("drain", pump);
        }
      };
      pump();
    });
    expect(statusLineOf(Buffer.from(reply, "latin1"))).toBe("HTTP/1.1 504 Gateway Timeout");
  });
});
