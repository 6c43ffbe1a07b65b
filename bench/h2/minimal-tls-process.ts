import type { AddressInfo } from "node:net";
import { createServer } from "node:tls";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";

/**
 * The floor for TLS handshakes: a `node:tls` server with one certificate and no SNI choice, no certificate
 * store, no HTTP: each connection is closed once its handshake completed.
 */
const cert = process.env.BENCH_TLS_CERT;
const key = process.env.BENCH_TLS_KEY;
if (!cert || !key) throw new Error("BENCH_TLS_CERT and BENCH_TLS_KEY must be set");
const server = createServer({ cert, key, ALPNProtocols: ["h2", "http/1.1"] }, (socket) => {
  socket.on("error", () => undefined);
  socket.end();
});
server.on("tlsClientError", () => undefined);
server.listen(0, "127.0.0.1", () => {
  tell({ type: "ready", port: (server.address() as AddressInfo).port });
});
answerCpuUsage();
exitOnStop(() => new Promise<void>((resolve) => server.close(() => resolve())));
