import { once } from "node:events";
import { constants } from "node:http2";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { publish, serviceRecord } from "../../fixtures.js";
import { closeAfterEach, startBackend, startNodeRouterOver } from "../../harness.js";
import { rawExchange, statusLineOf, until } from "../hostile-kit.js";
import { FLAG, FRAME, frame, PREFACE, pingFrame, settingsFrame } from "./frames.js";
import { h2Request, h2Session } from "./h2-client.js";
import { echo, routerToEcho as routerToEchoWith } from "./h2c-kit.js";

/**
 * One cleartext port for both protocols: connections that open with the HTTP/2 preface are HTTP/2, every
 * other one HTTP/1.1 as before; a preface in pieces is gathered, a stalled one closed; close() drains HTTP/2.
 */
const closing = closeAfterEach();
const routerToEcho = () => routerToEchoWith(closing);

describe("HTTP/2 and HTTP/1.1 connections on PORT", () => {
  it("still serves HTTP/1.1 on the same port, a head split across packets and pipelined requests included", async () => {
    const { router } = await routerToEcho();
    const socket = connect(router.port, "127.0.0.1");
    await once(socket, "connect");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.write("G");
    await new Promise((resolve) => setTimeout(resolve, 30));
    socket.write("ET /one HTTP/1.1\r\nHost: app.example\r\n\r\nGET /two HTTP/1.1\r\nHost: app.example\r\n");
    socket.write("Connection: close\r\n\r\n");
    await once(socket, "close");
    const reply = Buffer.concat(chunks).toString("latin1");
    expect(reply.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(reply).toContain('"url":"/one"');
    expect(reply).toContain('"url":"/two"');
  });

  it("answers an HTTP/1.1 request that starts like the preface but is not it as HTTP/1.1 does", async () => {
    const { router } = await routerToEcho();
    const reply = await rawExchange(
      router.port,
      "PRI / HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n",
    );
    expect(statusLineOf(reply)).toMatch(/^HTTP\/1\.1 \d{3}/);
  });

  it("drains HTTP/2 sessions on close: GOAWAY at once, the request under way still answered", async () => {
    const backend = await closing(
      startBackend("127.0.0.1", (req, res) => {
        req.resume();
        setTimeout(() => res.end("finished"), 100);
      }),
    );
    const router = await startNodeRouterOver({ config: { retries: 0 } });
    await publish(
      router.store,
      serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
    );
    const session = h2Session(router.port);
    const goaway = once(session, "goaway");
    const answer = h2Request(session, { ":path": "/slow", ":authority": "app.example" });
    await until(() => backend.seen.length === 1, "the request at the backend");
    const closed = router.close();
    const [code] = await goaway;
    expect(code).toBe(constants.NGHTTP2_NO_ERROR);
    expect(await answer).toMatchObject({ status: 200, body: "finished" });
    await closed;
    session.destroy();
  });

  it("serves HTTP/2 to a client whose preface comes in pieces across packets", async () => {
    const { router } = await routerToEcho();
    const socket = connect(router.port, "127.0.0.1");
    await once(socket, "connect");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    for (const piece of [PREFACE.subarray(0, 1), PREFACE.subarray(1, 10), PREFACE.subarray(10)]) {
      socket.write(piece);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    socket.write(Buffer.concat([settingsFrame(), pingFrame()]));
    // A PING ACK: the 8 payload bytes back, type 6, flag ACK.
    await until(
      () => Buffer.concat(received).includes(frame(FRAME.PING, FLAG.ACK, 0, Buffer.alloc(8, 7))),
      "PING ACK",
    );
    socket.destroy();
  });

  it("closes a connection that sends part of the preface and stalls, after the headers timeout, and keeps serving", async () => {
    const backend = await closing(startBackend("127.0.0.1", echo));
    const router = await closing(
      startNodeRouterOver({ config: { retries: 0, clientHeadersTimeoutMs: 300 } }),
    );
    await publish(
      router.store,
      serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
    );
    const stalled = connect(router.port, "127.0.0.1");
    stalled.on("error", () => undefined);
    await once(stalled, "connect");
    const closed = once(stalled, "close");
    const received: Buffer[] = [];
    stalled.on("data", (chunk: Buffer) => received.push(chunk));
    stalled.write(PREFACE.subarray(0, 8));
    // One that gives up half way is no trouble either.
    const gone = connect(router.port, "127.0.0.1");
    gone.on("error", () => undefined);
    await once(gone, "connect");
    gone.end(PREFACE.subarray(0, 5));
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    expect((await h2Request(session, { ":path": "/", ":authority": "app.example" })).status).toBe(200);
    await closed;
    expect(Buffer.concat(received)).toHaveLength(0);
  });
});
