import { createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";
import { GRPC_ANSWER } from "./grpc-call.js";

/**
 * The gRPC bench's backend: an h2c server that answers every unary call with one fixed length-prefixed message
 * and `grpc-status: 0` in the trailers, whatever was asked (the call's cost, not a service's, is measured).
 */
const server = createServer();
server.on("stream", (stream) => {
  stream.on("error", () => undefined);
  stream.resume();
  stream.on("end", () => {
    if (stream.destroyed) return;
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(GRPC_ANSWER);
  });
});
server.listen(0, "127.0.0.1", () => {
  tell({ type: "ready", port: (server.address() as AddressInfo).port });
});
answerCpuUsage();
exitOnStop(() => new Promise<void>((resolve) => server.close(() => resolve())));
