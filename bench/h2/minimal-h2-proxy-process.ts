import { constants, createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";
// Answers {type: "gc"} with V8's collections so far, as the router's probe does.
import "../proxy/gc-counts.mjs";

/**
 * The floor a Node HTTP/2 proxy can reach: a `node:http2` server (h2c prior knowledge) whose every stream goes to
 * one hard-coded HTTP/1.1 backend over an undici keep-alive Pool, the body piped back. No routing, no header
 * rules, no limits or budgets: everything edgeslice adds for HTTP/2 clients costs against this.
 */
const backendPort = Number(process.env.BENCH_BACKEND_PORT);
if (!Number.isInteger(backendPort) || backendPort <= 0) throw new Error("BENCH_BACKEND_PORT must be set");
const pool = new Pool(`http://127.0.0.1:${backendPort}`, { connections: 128, pipelining: 1 });

const server = createServer();
server.on("stream", (stream, headers) => {
  stream.on("error", () => undefined);
  pool
    .request({
      method: headers[":method"] === "HEAD" ? "HEAD" : "GET",
      path: String(headers[":path"] ?? "/"),
      headers: { host: String(headers[":authority"] ?? "") },
    })
    .then(({ statusCode, headers: answer, body }) => {
      if (stream.destroyed) return void body.dump();
      const length = answer["content-length"];
      stream.respond({
        ":status": statusCode,
        "content-type": String(answer["content-type"] ?? "application/octet-stream"),
        ...(length !== undefined ? { "content-length": String(length) } : {}),
      });
      body.pipe(stream);
    })
    .catch(() => {
      if (!stream.destroyed) stream.respond({ ":status": 502 }, { endStream: true });
    });
  stream.resume();
});
server.listen(0, "127.0.0.1", () => {
  tell({ type: "ready", port: (server.address() as AddressInfo).port });
});
answerCpuUsage();
exitOnStop(async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const session of sessions) session.close();
  });
  await pool.close();
});
const sessions = new Set<import("node:http2").Http2Session>();
server.on("session", (session) => {
  sessions.add(session);
  session.on("close", () => sessions.delete(session));
  session.on("error", () => session.destroy(undefined, constants.NGHTTP2_INTERNAL_ERROR));
});
