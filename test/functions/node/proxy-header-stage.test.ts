import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { createServer as createTlsServer, connect as tlsConnect } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { parseTrustedProxies, type TrustedProxies } from "../../../functions/core/http/trusted-proxies.js";
import { connectionFactsOf } from "../../../functions/node/connection-facts.js";
import {
  type ProxyHeaderRefusal,
  proxyHeaderStage,
  withConnectionStage,
} from "../../../functions/node/proxy-header-stage.js";
import { proxyV1, proxyV2 } from "../../lib/proxy-protocol-bytes.js";
import { createTestAuthority } from "../../support/certificates.js";

/** The PROXY protocol on a real listener, spoken over raw sockets by a test acting as the balancer. */

function trusted(text: string): TrustedProxies {
  const parsed = parseTrustedProxies(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const LOOPBACK = trusted("127.0.0.0/8, ::1");
const ELSEWHERE = trusted("10.0.0.0/8");
const REQUEST = "GET /who HTTP/1.1\r\nHost: app.example\r\n\r\n";
const open: { close(): void }[] = [];
afterEach(() => {
  for (const server of open.splice(0)) server.close();
});

/** An HTTP server behind the stage that answers each request with its connection's facts. */
async function factsServer(proxies: TrustedProxies, timeoutMs = 5_000) {
  const refusals: ProxyHeaderRefusal[] = [];
  const server: Server = createServer((req, res) => {
    res.end(JSON.stringify(connectionFactsOf(req.socket, proxies)));
  });
  withConnectionStage(
    server,
    proxyHeaderStage({ trusted: proxies, timeoutMs, onRefused: (r) => refusals.push(r) }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  open.push({ close: () => server.close() });
  server.on("close", () => server.closeAllConnections());
  return { port: (server.address() as { port: number }).port, refusals, server };
}

/** Writes each chunk in its own packet (a short pause between), then reads until the server closes. */
async function exchange(port: number, chunks: readonly (Uint8Array | string)[]): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  let reply = "";
  socket.setEncoding("utf8");
  socket.on("data", (text: string) => {
    reply += text;
  });
  const ended = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.on("error", () => {});
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  for (const chunk of chunks) {
    socket.write(chunk);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await until(socket, () => reply.includes("}") || socket.destroyed);
  socket.end();
  await ended;
  return reply;
}

async function until(socket: Socket, done: () => boolean): Promise<void> {
  while (!done()) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20);
      socket.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

const factsIn = (reply: string) => JSON.parse(reply.slice(reply.indexOf("{"))) as Record<string, unknown>;

describe("a PROXY header from a trusted balancer", () => {
  it("names the client of a v1 connection, and the request after it is served", async () => {
    const { port } = await factsServer(LOOPBACK);
    const reply = await exchange(port, [proxyV1("TCP4", ["203.0.113.7", 51000], ["192.0.2.1", 80]), REQUEST]);
    expect(reply).toMatch(/^HTTP\/1.1 200/);
    expect(factsIn(reply)).toEqual({
      clientIp: "203.0.113.7",
      clientPort: 51000,
      trustedPeer: false,
      proxied: true,
    });
  });

  it("names the client of a v2 connection sent in the same packet as the request", async () => {
    const { port } = await factsServer(LOOPBACK);
    const header = proxyV2({ source: ["2001:db8::7", 443], destination: ["2001:db8::1", 8443] });
    const reply = await exchange(port, [Buffer.concat([header, Buffer.from(REQUEST)])]);
    expect(factsIn(reply)).toMatchObject({ clientIp: "2001:db8::7", clientPort: 443, proxied: true });
  });

  it("reads a header split byte by byte across packets", async () => {
    const { port } = await factsServer(LOOPBACK);
    const header = proxyV2({ source: ["198.51.100.4", 1], destination: ["192.0.2.1", 2] });
    const reply = await exchange(port, [...[...header].map((byte) => Uint8Array.of(byte)), REQUEST]);
    expect(factsIn(reply)).toMatchObject({ clientIp: "198.51.100.4", proxied: true });
  });

  it("keeps the facts for every request of a kept-alive connection", async () => {
    const { port } = await factsServer(LOOPBACK);
    const header = proxyV1("TCP4", ["203.0.113.7", 51000], ["192.0.2.1", 80]);
    const reply = await exchange(port, [
      header,
      REQUEST,
      REQUEST.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"),
    ]);
    expect(reply.match(/"clientIp":"203\.0\.113\.7"/g)).toHaveLength(2);
  });

  it("trusts a relayed client that is itself a trusted proxy", async () => {
    const { port } = await factsServer(trusted("127.0.0.0/8, 10.0.0.0/8"));
    const reply = await exchange(port, [proxyV1("TCP4", ["10.1.2.3", 1], ["192.0.2.1", 80]), REQUEST]);
    expect(factsIn(reply)).toMatchObject({ clientIp: "10.1.2.3", trustedPeer: true });
  });

  it.each([
    [
      "v2 LOCAL (the balancer's own health check)",
      proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2], command: 0 }),
    ],
    ["v1 UNKNOWN", new TextEncoder().encode("PROXY UNKNOWN\r\n")],
    ["no header at all", new Uint8Array(0)],
  ])("keeps the socket's peer for %s", async (_what, header) => {
    const { port } = await factsServer(LOOPBACK);
    const reply = await exchange(port, header.length > 0 ? [header, REQUEST] : [REQUEST]);
    expect(factsIn(reply)).toMatchObject({ clientIp: "127.0.0.1", trustedPeer: true, proxied: false });
  });
});

describe("a connection the stage refuses (closed before HTTP reads a byte)", () => {
  it.each([
    [
      "a v1 header from a peer outside TRUSTED_PROXIES",
      ELSEWHERE,
      [proxyV1("TCP4", ["203.0.113.7", 1], ["192.0.2.1", 80]), REQUEST],
      "untrusted",
    ],
    [
      "a v2 header from a peer outside TRUSTED_PROXIES",
      ELSEWHERE,
      [proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2] }), REQUEST],
      "untrusted",
    ],
    ["a malformed v1 header", LOOPBACK, ["PROXY TCP4 203.0.113.700 192.0.2.1 1 2\r\n", REQUEST], "malformed"],
    ["a v1 header without its CRLF in 107 bytes", LOOPBACK, [`PROXY TCP4 ${" ".repeat(110)}`], "malformed"],
    [
      "a v2 header of another version",
      LOOPBACK,
      [proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2], version: 3 }), REQUEST],
      "malformed",
    ],
    [
      "a v2 header longer than the bound",
      LOOPBACK,
      [proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2], tlvs: new Uint8Array(5000) })],
      "malformed",
    ],
  ] as const)("%s", async (_what, proxies, chunks, refusal) => {
    const { port, refusals } = await factsServer(proxies);
    expect(await exchange(port, chunks)).toBe("");
    expect(refusals).toEqual([refusal]);
  });

  it("a truncated header that stalls, once the bound passes", async () => {
    const { port, refusals } = await factsServer(LOOPBACK, 150);
    const header = proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2] });
    expect(await exchange(port, [header.subarray(0, 20)])).toBe("");
    expect(refusals).toEqual(["timeout"]);
  });

  it("serves an untrusted peer that sends no header, as without the setting", async () => {
    const { port, refusals } = await factsServer(ELSEWHERE);
    expect(factsIn(await exchange(port, [REQUEST]))).toMatchObject({
      clientIp: "127.0.0.1",
      trustedPeer: false,
    });
    expect(refusals).toEqual([]);
  });
});

describe("a PROXY header before TLS (HTTPS_PORT)", () => {
  it.each([
    ["in a packet of its own", false],
    ["in the packet that carries the ClientHello", true],
  ])(
    "is read before the handshake %s, and the TLS socket's connection carries the client",
    async (_what, together) => {
      const authority = createTestAuthority();
      const leaf = authority.issue(["app.example"]);
      const seen: unknown[] = [];
      const tls = createTlsServer({ cert: leaf.cert, key: leaf.key }, (socket) => {
        seen.push(connectionFactsOf(socket, LOOPBACK));
        socket.end("hello");
      });
      withConnectionStage(tls, proxyHeaderStage({ trusted: LOOPBACK, timeoutMs: 5_000 }));
      await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
      open.push({ close: () => tls.close() });
      const raw = connect((tls.address() as { port: number }).port, "127.0.0.1");
      await new Promise<void>((resolve) => raw.once("connect", () => resolve()));
      if (together) raw.cork();
      raw.write(proxyV2({ source: ["203.0.113.7", 40000], destination: ["192.0.2.1", 443] }));
      const client = tlsConnect({ socket: raw, servername: "app.example", ca: authority.cert });
      if (together) setTimeout(() => raw.uncork(), 20);
      let text = "";
      client.setEncoding("utf8");
      client.on("data", (chunk: string) => {
        text += chunk;
      });
      await new Promise<void>((resolve, reject) => {
        client.on("end", () => resolve());
        client.on("error", reject);
      });
      client.destroy();
      expect(text).toBe("hello");
      expect(seen).toEqual([
        { clientIp: "203.0.113.7", clientPort: 40000, trustedPeer: false, proxied: true },
      ]);
    },
  );
});
