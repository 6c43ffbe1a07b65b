import { IncomingMessage } from "node:http";

/** Names h2c among the protocols of an Upgrade field value (RFC 9110 §7.8: comma-separated, case-insensitive). */
const NAMES_H2C = /(?:^|,)[ \t]*h2c[ \t]*(?:,|$)/i;

const ASKED = Symbol("edgeslice.upgradeAsked");

/**
 * http.Server's request, except that one asking to upgrade to h2c is no upgrade: Node hands an upgrade to the
 * 'upgrade' listener with the raw socket, which would tunnel the connection to a backend, and every request
 * sent through that tunnel would pass the router's routing unseen. RFC 9113 §3.1 obsoletes the h2c upgrade, and
 * a server may ignore an Upgrade (RFC 9110 §7.8): such a request is served as plain HTTP/1.1, where Upgrade is a
 * hop-by-hop field the backend never sees. Node's parser still stops at the end of that request as for an
 * upgrade, dropping whatever the client sent after it in the same packet, so its answer closes the connection
 * (`declinedUpgrade`): a client that pipelined more sees them unanswered on a closed connection, never lost.
 *
 * Node sets `upgrade` before it adds the header fields and reads it after, so it is decided when read.
 */
export class RouterIncomingMessage extends IncomingMessage {
  declare [ASKED]: boolean | null;
}
Object.defineProperty(RouterIncomingMessage.prototype, "upgrade", {
  get(this: RouterIncomingMessage): boolean {
    return this[ASKED] === true && !asksForH2c(this.rawHeaders);
  },
  set(this: RouterIncomingMessage, asked: boolean | null) {
    this[ASKED] = asked;
  },
});

/** The request asked for an upgrade the router declined (h2c): its answer must close the connection. */
export function declinedUpgrade(incoming: IncomingMessage): boolean {
  const request = incoming as Partial<RouterIncomingMessage> & { readonly upgrade?: boolean };
  return request[ASKED] === true && request.upgrade === false;
}

function asksForH2c(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 7 && name.toLowerCase() === "upgrade" && NAMES_H2C.test(rawHeaders[i + 1] ?? "")) {
      return true;
    }
  }
  return false;
}
