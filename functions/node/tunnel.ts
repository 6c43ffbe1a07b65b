import type { Socket } from "node:net";

/**
 * TCP keep-alive probes start after this much silence on an upgraded connection. No timeout applies to a
 * tunnel (WebSockets live long), so keep-alive is what finds a peer that vanished without FIN or RST; Linux
 * would otherwise wait 2 hours before the first probe (Node docs: socket.setKeepAlive).
 */
const TUNNEL_KEEPALIVE_MS = 30_000;

/**
 * Joins an upgraded client connection to its backend connection (after the 101 head went to the client), both
 * ways with backpressure: an end (FIN) on one side ends the other once flushed, and a close closes the other (at
 * once after an error, else endThenDestroy). `clientHead`: bytes the client sent right after its request head,
 * already read by Node's parser (Node docs: the 'upgrade' event's `head`). `onClosed` runs once both are closed.
 */
export function joinSockets(client: Socket, backend: Socket, clientHead: Buffer, onClosed: () => void): void {
  for (const socket of [client, backend]) {
    socket.setKeepAlive(true, TUNNEL_KEEPALIVE_MS);
    socket.setNoDelay(true);
    // A server's keep-alive timeout may still be armed on the client socket; nothing bounds a tunnel's life.
    socket.setTimeout(0);
  }
  let open = 2;
  const closed = (other: Socket) => (hadError: boolean) => {
    if (hadError) other.destroy();
    else endThenDestroy(other);
    if (--open === 0) onClosed();
  };
  client.once("close", closed(backend));
  backend.once("close", closed(client));
  if (clientHead.length > 0) backend.write(clientHead);
  client.pipe(backend);
  backend.pipe(client);
}

/**
 * Ends a socket (FIN after what is queued) and destroys it once that is flushed, or after `graceMs` if the
 * peer does not read: a connection the router is done with never lingers half-open (Node's own
 * `Connection: close` handling also destroys once the response finished).
 */
export function endThenDestroy(socket: Socket, graceMs = 5_000): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), graceMs).unref();
  socket.once("close", () => clearTimeout(timer));
  socket.end(() => socket.destroy());
}
