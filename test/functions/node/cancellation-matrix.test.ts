import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { sealBinding, sealKey } from "../../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION } from "../../../store/certificates.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { createTestAuthority } from "../../support/certificates.js";
import { publish, serviceRecord } from "../fixtures.js";
import { closeServer } from "../harness.js";
import { type H2cBackend, publishH2c, startH2cBackend } from "./h2c/h2c-kit.js";
import { until } from "./hostile-kit.js";
import { CODE, FLAG, FRAME, frame, literal, RawH2, requestBlock, rstStreamFrame } from "./http2/frames.js";

/**
 * Cancellation is one rule (issue 34): however a client leaves (RST_STREAM, a TCP close, a TLS close, an
 * HTTP/1.1 close, a timeout), the exchange ends and the backend's stream or connection is released within 1 s.
 * Every front (HTTP/1.1 and HTTP/2 on PORT, both over TLS on HTTPS_PORT) times every upstream protocol
 * (HTTP/1.1, h2c) times every way of leaving, counted at the backend: its open connections (HTTP/1.1: the
 * router's pooled connections to it) or its open streams (h2c).
 */
const BODY_IDLE_MS = 300;
const HOSTS = { http1: "h1.example", h2c: "h2c.example" } as const;
type Upstream = keyof typeof HOSTS;

let router: NodeRouter;
let httpsPort: number;
let http1Open = 0;
let http1Arrived = 0;
let h2cOpen = 0;
let h2cArrived = 0;
const held: Socket[] = [];
let http1Server: ReturnType<typeof createServer>;
let h2c: H2cBackend;

beforeAll(async () => {
  // Backends that take every request and never answer: only the client leaving ends it.
  http1Server = createServer((req: IncomingMessage) => {
    http1Arrived++;
    req.resume();
  });
  http1Server.on("connection", (socket: Socket) => {
    http1Open++;
    held.push(socket);
    socket.once("close", () => http1Open--);
  });
  await new Promise<void>((resolve) => http1Server.listen(0, "127.0.0.1", resolve));
  h2c = await startH2cBackend((stream) => {
    h2cArrived++;
    h2cOpen++;
    stream.resume();
    stream.once("close", () => h2cOpen--);
  });
  const store = new MemoryStore();
  const http1Port = (http1Server.address() as AddressInfo).port;
  await publish(
    store,
    serviceRecord({
      cluster: "a",
      service: "default/h1",
      hosts: [HOSTS.http1],
      ipv4: [{ ip: "127.0.0.1", port: http1Port }],
    }),
  );
  await publishH2c(store, [h2c.port], { protocol: "h2c", hostnames: [HOSTS.h2c] });
  const storeKey = randomBytes(32);
  const leaf = createTestAuthority().issue([HOSTS.http1, HOSTS.h2c]);
  await store.writer("a").certificates?.putCertificate({
    v: CERTIFICATE_SCHEMA_VERSION,
    id: "default/edge",
    hostnames: [HOSTS.http1, HOSTS.h2c],
    version: "c".repeat(64),
    cert: leaf.cert,
    key: sealKey(storeKey, sealBinding("a", "default/edge"), leaf.key),
  });
  const config = parseRouterConfig({
    PORT: "0",
    HTTPS_PORT: "0",
    ADMIN_PORT: "0",
    TLS_STORE_KEY: storeKey.toString("base64"),
    UPSTREAM_RETRIES: "0",
    CLIENT_BODY_IDLE_TIMEOUT_MS: String(BODY_IDLE_MS),
  });
  router = await startNodeRouter(config, {
    source: store,
    certificates: store,
    host: "127.0.0.1",
    logger: silentLogger,
    drainMs: 200,
  });
  httpsPort = router.https?.port ?? 0;
  await until(() => (router.https?.certificates.table().size ?? 0) > 0, "the certificate loaded");
});

afterAll(async () => {
  await router?.close();
  for (const socket of held) socket.destroy();
  await closeServer(http1Server);
  await h2c?.close();
});

/** An HTTP/1.1 request on `socket`: a GET, or a POST whose body stalls after its first bytes. */
function writeHttp1(socket: Socket, host: string, stall: boolean): void {
  socket.on("error", () => undefined);
  socket.write(
    stall
      ? `POST /held HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 10\r\n\r\nab`
      : `GET /held HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
  );
}

/** Stream 1 on an HTTP/2 connection: a GET, or a POST whose body stalls after its first bytes. */
function writeHttp2(client: RawH2, host: string, stall: boolean): void {
  if (!stall) {
    client.write(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, requestBlock(host, "/held")));
    return;
  }
  const block = Buffer.concat([requestBlock(host, "/held", "POST"), literal("content-length", "10")]);
  client.write(frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, block));
  client.write(frame(FRAME.DATA, 0, 1, Buffer.from("ab")));
}

async function http1Clear(host: string, stall: boolean) {
  const socket = connect(router.port, "127.0.0.1");
  await once(socket, "connect");
  writeHttp1(socket, host, stall);
  return socket;
}

async function http1Tls(host: string, stall: boolean) {
  const socket = tlsConnect({
    port: httpsPort,
    host: "127.0.0.1",
    servername: host,
    ALPNProtocols: ["http/1.1"],
    rejectUnauthorized: false,
  });
  await once(socket, "secureConnect");
  writeHttp1(socket, host, stall);
  return socket;
}

async function http2Clear(host: string, stall: boolean) {
  const client = await RawH2.open(router.port);
  writeHttp2(client, host, stall);
  return client;
}

async function http2Tls(host: string, stall: boolean) {
  const client = await RawH2.openTls(httpsPort, host);
  writeHttp2(client, host, stall);
  return client;
}

/** Front × way of leaving: how the client connects, and each way it can go away (or stall until cut). */
const MATRIX = [
  [
    "HTTP/1.1 on PORT",
    http1Clear,
    [
      ["closes its connection", (s: Socket) => s.destroy()],
      ["resets its connection", (s: Socket) => s.resetAndDestroy()],
    ],
  ],
  [
    "HTTP/1.1 over TLS",
    http1Tls,
    [
      ["closes TLS (close_notify and FIN)", (s: Socket) => s.end()],
      ["closes its TCP connection", (s: Socket) => s.destroy()],
    ],
  ],
  [
    "HTTP/2 on PORT",
    http2Clear,
    [
      ["resets its stream (RST_STREAM)", (c: RawH2) => c.write(rstStreamFrame(1, CODE.CANCEL))],
      ["closes its TCP connection", (c: RawH2) => c.socket.destroy()],
      ["half-closes its TCP connection (FIN)", (c: RawH2) => c.socket.end()],
    ],
  ],
  [
    "HTTP/2 over TLS",
    http2Tls,
    [
      ["resets its stream (RST_STREAM)", (c: RawH2) => c.write(rstStreamFrame(1, CODE.CANCEL))],
      ["closes TLS (close_notify and FIN)", (c: RawH2) => c.socket.end()],
      ["closes its TCP connection", (c: RawH2) => c.socket.destroy()],
    ],
  ],
] as const;

/** The backend's count of what it holds open for `upstream`, and of requests that reached it. */
const counts = (upstream: Upstream) =>
  upstream === "http1" ? { open: http1Open, arrived: http1Arrived } : { open: h2cOpen, arrived: h2cArrived };

async function releasedWithin1s(
  upstream: Upstream,
  hold: () => Promise<unknown>,
  leave: () => void,
  waited = 0,
) {
  const before = counts(upstream);
  await hold();
  await until(() => counts(upstream).arrived > before.arrived, "the request at the backend");
  leave();
  const left = Date.now();
  await until(() => counts(upstream).open <= before.open, "the backend's side released");
  expect(Date.now() - left - waited).toBeLessThan(1_000);
}

describe.each(MATRIX)("a client on %s", (_front, open, leavings) => {
  describe.each(["http1", "h2c"] as const)("to an %s backend", (upstream) => {
    it.each(leavings as readonly (readonly [string, (client: never) => void])[])(
      "that %s has its backend's stream or connection released within 1 s",
      async (_how, leave) => {
        let client: unknown;
        await releasedWithin1s(
          upstream,
          async () => (client = await open(HOSTS[upstream], false)),
          () => leave(client as never),
        );
      },
    );

    it(`that stalls its body past CLIENT_BODY_IDLE_TIMEOUT_MS has its backend's side released within 1 s of it`, async () => {
      let client: { destroy(): void } | undefined;
      await releasedWithin1s(
        upstream,
        async () => (client = await open(HOSTS[upstream], true)),
        () => undefined,
        BODY_IDLE_MS,
      );
      client?.destroy();
    });
  });
});
