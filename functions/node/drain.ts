import type { IncomingMessage } from "node:http";

/**
 * What @hono/node-server does with a request body nobody read once the response closed (a POST answered 404,
 * or 502 before the backend asked for its body), for the requests node/direct-requests.ts serves without it:
 * two turns later, read and discard at most MAX_DRAIN_BYTES for at most DRAIN_TIMEOUT_MS, then close the
 * connection, so a client cannot hold it by sending a body the router will never use.
 */
const DRAIN_TIMEOUT_MS = 500;
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

export function drainUnreadBody(incoming: IncomingMessage): void {
  if (incoming.readableEnded) return;
  setTimeout(() => {
    if (!incoming.readableEnded) setTimeout(() => drain(incoming));
  });
}

function drain(incoming: IncomingMessage): void {
  if (incoming.destroyed || incoming.readableEnded) return;
  let bytesRead = 0;
  const cleanup = () => {
    clearTimeout(timer);
    incoming.off("data", onData);
    incoming.off("end", cleanup);
    incoming.off("error", cleanup);
  };
  const forceClose = () => {
    cleanup();
    const socket = incoming.socket;
    if (socket && !socket.destroyed) socket.destroySoon();
  };
  const timer = setTimeout(forceClose, DRAIN_TIMEOUT_MS);
  timer.unref();
  const onData = (chunk: Buffer) => {
    bytesRead += chunk.length;
    if (bytesRead > MAX_DRAIN_BYTES) forceClose();
  };
  incoming.on("data", onData);
  incoming.on("end", cleanup);
  incoming.on("error", cleanup);
  incoming.resume();
}
