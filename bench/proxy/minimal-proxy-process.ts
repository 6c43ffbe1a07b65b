import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";
// Answers {type: "gc"} with V8's collections so far, as the router's probe does.
import "./gc-counts.mjs";

/**
 * The floor a Node proxy can reach: one hard-coded backend, an undici keep-alive Pool, `Pool.request` and a
 * plain pipe of the body. No routing, no header rules, no retries: everything edgeslice adds costs against this.
 */
const backendPort = Number(process.env.BENCH_BACKEND_PORT);
if (!Number.isInteger(backendPort) || backendPort <= 0) throw new Error("BENCH_BACKEND_PORT must be set");
const pool = new Pool(`http://127.0.0.1:${backendPort}`, { connections: 128, pipelining: 1 });

const server = createServer((request, response) => {
  pool
    .request({
      method: request.method === "HEAD" ? "HEAD" : "GET",
      path: request.url ?? "/",
      headers: { host: request.headers.host ?? "" },
    })
    .then(({ statusCode, headers, body }) => {
      const length = headers["content-length"];
      response.writeHead(statusCode, {
        "content-type": String(headers["content-type"] ?? "application/octet-stream"),
        ...(length !== undefined ? { "content-length": String(length) } : {}),
      });
      body.pipe(response);
    })
    .catch(() => {
      response.writeHead(502).end();
    });
  request.resume();
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  tell({ type: "ready", port: (server.address() as AddressInfo).port });
});
answerCpuUsage();
exitOnStop(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await pool.close();
});
