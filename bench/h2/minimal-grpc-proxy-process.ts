import { connect, constants, createServer, type OutgoingHttpHeaders } from "node:http2";
import type { AddressInfo } from "node:net";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";
// Answers {type: "gc"} with V8's collections so far, as the router's probe does.
import "../proxy/gc-counts.mjs";

/**
 * The floor a Node gRPC proxy can reach: an h2c server whose every stream becomes a stream on one HTTP/2
 * session to the hard-coded h2c backend, bodies piped both ways and the trailers relayed. No routing, no
 * header rules, no limits.
 */
const backendPort = Number(process.env.BENCH_GRPC_BACKEND_PORT);
if (!Number.isInteger(backendPort) || backendPort <= 0)
  throw new Error("BENCH_GRPC_BACKEND_PORT must be set");
const upstream = connect(`http://127.0.0.1:${backendPort}`);
upstream.on("error", () => undefined);

const server = createServer();
server.on("stream", (stream, headers) => {
  stream.on("error", () => undefined);
  const request: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (name !== ":scheme") request[name] = value;
  const call = upstream.request(request);
  call.on("error", () => stream.close(constants.NGHTTP2_INTERNAL_ERROR));
  call.on("response", (answer) => {
    if (stream.destroyed) return;
    stream.respond(answer, { waitForTrailers: true });
    call.pipe(stream);
  });
  call.on("trailers", (trailers) => {
    stream.once("wantTrailers", () => stream.sendTrailers(trailers));
  });
  stream.pipe(call);
});
server.listen(0, "127.0.0.1", () => {
  tell({ type: "ready", port: (server.address() as AddressInfo).port });
});
answerCpuUsage();
exitOnStop(async () => {
  upstream.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
