import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";
import { LARGE_BODY, PAYLOAD_PATHS, SMALL_BODY } from "./payloads.js";

/** The upstream every scenario ends at: fixed bodies with Content-Length, keep-alive. */
const server = createServer((request, response) => {
  const body = request.url === PAYLOAD_PATHS.large ? LARGE_BODY : SMALL_BODY;
  request.resume();
  response.writeHead(200, { "content-type": "text/plain", "content-length": body.length });
  response.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  tell({ type: "ready", port: (server.address() as AddressInfo).port });
});
answerCpuUsage();
exitOnStop(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);
