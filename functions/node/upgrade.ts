import { request as httpRequest, type IncomingMessage, STATUS_CODES } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import { errorAnswer, type RouterError } from "../core/errors.js";
import {
  type ForwardingInfo,
  upgradeResponseHeaderList,
  upstreamUpgradeHeaderList,
} from "../core/headers.js";
import {
  type AbortCause,
  type AttemptResult,
  type Attempts,
  abortedBeforeAttempt,
  noteAnswer,
  noteAttemptFailure,
  type PolicyDeps,
  withRetries,
} from "../core/proxy-policy.js";
import type { Routing } from "../core/routing.js";
import type { Backend } from "../core/select.js";
import { isConnectPhaseError } from "../transports/undici.js";
import { hasBody } from "./proxy.js";
import { endThenDestroy, joinSockets } from "./tunnel.js";

/**
 * HTTP/1.1 Upgrade (WebSocket) on the Node router. http.Server hands an upgrade request to its 'upgrade'
 * listener with the raw socket instead of the request handler (Node docs: http.Server 'upgrade'), so the
 * Hono app never sees it; this path routes it with the same core (routing.ts: requestTarget, normaliseHost,
 * lookupRoute, selection, balancer, ejection, metrics), sends it to a store-listed backend, and on a 101
 * joins the two sockets (node-tunnel.ts).
 *
 * The backend request goes over node:http's client on a fresh connection, not undici's `upgrade()` on the
 * backend's pool: undici rejects any answer but 101 with "bad upgrade" and drops it, while a backend's
 * 400/401/403/404 must reach the client; node:http parses that answer and its framing (Content-Length,
 * chunked), and on a 101 hands over the raw socket with the bytes it read past the head. An upgraded
 * connection leaves any pool anyway, so a pooled one would buy nothing.
 */
export interface NodeUpgrades {
  /** The http.Server 'upgrade' listener. */
  readonly listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * Destroys every client and backend connection in a handshake, a relayed answer or a tunnel (the router's
   * close, once its drain bound is over).
   */
  destroyAll(): void;
}

/** The backend's answer to one handshake: a 101 with its socket, or any other response to relay. */
interface Answer {
  readonly backend: Backend;
  readonly response: IncomingMessage;
  readonly upgraded?: { readonly socket: Socket; readonly head: Buffer };
}

export function createNodeUpgrades(routing: Routing): NodeUpgrades {
  const { policy } = routing;
  const { metrics, logger } = policy;
  const open = new Set<Socket>();

  const track = (socket: Socket) => {
    open.add(socket);
    // A socket Node no longer watches must never throw from an 'error' without a listener.
    socket.on("error", (error) => logger.debug("upgrade connection error", { error }));
    socket.once("close", () => open.delete(socket));
  };

  const refuse = (client: Socket, error: RouterError) => {
    const answer = errorAnswer(error);
    metrics.countResponse(answer.status);
    if (client.destroyed) return;
    // Read and drop whatever the client still sends: closing with unread bytes would reset the connection
    // and could take the answer with it.
    client.resume();
    let head = statusLine(answer.status, undefined);
    for (const [name, value] of answer.headers) head += `${name}: ${value}\r\n`;
    client.write(`${head}content-length: ${Buffer.byteLength(answer.body)}\r\nconnection: close\r\n\r\n`);
    client.write(answer.body);
    endThenDestroy(client);
  };

  const handle = async (request: IncomingMessage, client: Socket, clientHead: Buffer) => {
    // An upgrade carries no content here: its bytes after the head belong to the new protocol. One that
    // declares a body (an h2c POST) is not proxied.
    if (hasBody(request.rawHeaders)) return refuse(client, "bad_request");
    const url = incomingUrl(request);
    if (url === undefined) return refuse(client, "bad_request");
    const routed = await routing.route(url);
    if (typeof routed === "string") return refuse(client, routed);
    const forwarding: ForwardingInfo = {
      clientIp: client.remoteAddress,
      proto: routed.target.proto,
      host: routed.target.authority,
    };
    const handshake = new Handshake(
      client,
      request.method ?? "GET",
      routed.target.path,
      upstreamUpgradeHeaderList(request.rawHeaders, forwarding),
      policy,
    );
    const result = await withRetries(routed.selection, handshake, policy);
    if (!result.ok) return refuse(client, result.error);
    const { backend, response, upgraded } = result.value;
    metrics.countResponse(response.statusCode ?? 0);
    if (client.destroyed) {
      response.destroy();
      upgraded?.socket.destroy();
      return;
    }
    const head = `${statusLine(response.statusCode ?? 0, response.statusMessage)}${fields(
      upgradeResponseHeaderList(response.rawHeaders, upgraded !== undefined),
    )}\r\n`;
    if (!upgraded) return relay(client, head, response);
    track(upgraded.socket);
    client.write(head);
    if (upgraded.head.length > 0) client.write(upgraded.head);
    metrics.upgradedConnections++;
    // An open tunnel counts as in flight on its backend until it closes, so power-of-two-choices spreads
    // long-lived connections by how many each backend holds (least connections), not by handshakes.
    policy.balancer.acquire(backend.address);
    joinSockets(client, upgraded.socket, clientHead, () => {
      metrics.upgradedConnections--;
      policy.balancer.release(backend.address);
    });
  };

  return {
    listener(request, socket, head) {
      if (!(socket instanceof Socket)) {
        socket.destroy();
        return;
      }
      track(socket);
      handle(request, socket, head).catch((error: unknown) => {
        logger.warn("upgrade failed", { error });
        socket.destroy();
      });
    },
    destroyAll() {
      for (const socket of open) socket.destroy();
    },
  };
}

/**
 * A backend's answer that declined the upgrade goes to the client as is, and the connection closes after it
 * (the client's socket was taken from Node's HTTP parser, so it cannot carry another request). A backend
 * failing mid-body ends the client's connection abruptly, never with a clean end.
 */
function relay(client: Socket, head: string, response: IncomingMessage): void {
  client.resume();
  client.write(head);
  client.once("close", () => response.destroy());
  response.once("error", () => client.destroy());
  response.once("end", () => endThenDestroy(client));
  response.pipe(client, { end: false });
}

/** One upgrade request and its attempts under the shared policy (proxy-policy.ts). */
class Handshake implements Attempts<Answer> {
  readonly method: string;
  readonly #path: string;
  readonly #headers: string[];
  readonly #policy: PolicyDeps;
  readonly #deadline: number;
  #clientGone = false;
  #cut: ((cause: AbortCause) => void) | undefined;

  constructor(client: Socket, method: string, path: string, headers: string[], policy: PolicyDeps) {
    this.method = method;
    this.#path = path;
    this.#headers = headers;
    this.#policy = policy;
    this.#deadline = Date.now() + policy.settings.totalTimeoutMs;
    client.once("close", () => {
      this.#clientGone = true;
      this.#cut?.("client-gone");
    });
  }

  /** There is no body to send again. */
  canResend(): boolean {
    return true;
  }

  attempt(backend: Backend): Promise<AttemptResult<Answer>> {
    if (this.#clientGone) return Promise.resolve(abortedBeforeAttempt("client-gone"));
    const remaining = this.#deadline - Date.now();
    if (remaining <= 0) return Promise.resolve(abortedBeforeAttempt("total-timeout"));
    const policy = this.#policy;
    const { tryTimeoutMs } = policy.settings;
    return new Promise((resolve) => {
      let settled = false;
      let connected = false;
      const settle = (result: AttemptResult<Answer>) => {
        settled = true;
        clearTimeout(timer);
        this.#cut = undefined;
        resolve(result);
      };
      // Another backend is tried only when nothing reached this one (a refused or timed-out connect): once
      // the request was sent, the backend may have acted on it.
      const fail = (cause: AbortCause | undefined, connectFailure: boolean, error: unknown) => {
        const failure = noteAttemptFailure(backend, cause, connectFailure, error, policy);
        settle(connected ? { ...failure, stop: true } : failure);
      };
      const upstream = httpRequest({
        host: backend.ip,
        port: backend.port,
        method: this.method,
        path: this.#path,
        headers: this.#headers,
        setHost: false,
        agent: false,
      });
      const cut = (cause: AbortCause) => {
        if (settled) return;
        fail(cause, false, new Error(`upgrade attempt cut: ${cause}`));
        upstream.destroy();
      };
      this.#cut = cut;
      // One timer bounds connect plus the wait for the answer's head, whichever limit ends first.
      const timer =
        remaining <= tryTimeoutMs
          ? setTimeout(cut, remaining, "total-timeout")
          : setTimeout(cut, tryTimeoutMs, "try-timeout");
      upstream.once("socket", (socket) =>
        socket.once("connect", () => {
          connected = true;
        }),
      );
      upstream.on("error", (error) => {
        if (!settled) fail(undefined, isConnectPhaseError(error), error);
      });
      upstream.once("upgrade", (response: IncomingMessage, socket: Socket, head: Buffer) => {
        // node:http dropped its own listeners from the socket when it handed it over.
        socket.on("error", (error) => policy.logger.debug("upgrade backend connection error", { error }));
        if (settled) {
          socket.destroy();
          return;
        }
        noteAnswer(backend, 101, policy);
        settle({ ok: true, value: { backend, response, upgraded: { socket, head } } });
      });
      upstream.once("response", (response: IncomingMessage) => {
        if (settled) {
          response.destroy();
          return;
        }
        noteAnswer(backend, response.statusCode ?? 0, policy);
        settle({ ok: true, value: { backend, response } });
      });
      upstream.end();
    });
  }
}

/**
 * The URL @hono/node-server builds for a request (its `newRequest`, not exported), so an upgrade routes on
 * exactly what the Hono app would have: an absolute-form target as given, otherwise scheme + Host + target,
 * through the WHATWG URL parser (dot segments resolved); a missing Host, a backslash in the path, or a Host
 * the parser reads as another host name (`a@b`, `a/b`) is refused. Undefined means 400.
 */
export function incomingUrl(request: IncomingMessage): string | undefined {
  const target = request.url ?? "";
  const query = target.indexOf("?");
  if ((query < 0 ? target : target.slice(0, query)).includes("\\")) return undefined;
  try {
    if (target.startsWith("http://") || target.startsWith("https://")) return new URL(target).href;
    const host = request.headers.host;
    if (!host || (target !== "" && target[0] !== "/")) return undefined;
    const scheme = (request.socket as Partial<TLSSocket>).encrypted ? "https" : "http";
    const url = new URL(`${scheme}://${host}${target}`);
    const hostname = host.includes(":") ? host.replace(/:\d+$/, "") : host;
    if (url.hostname.length !== host.length && url.hostname !== hostname.toLowerCase()) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

function statusLine(status: number, reason: string | undefined): string {
  return `HTTP/1.1 ${status} ${reason || STATUS_CODES[status] || ""}\r\n`;
}

/** A flat name, value list as header lines (Node's parser already refused CR, LF and NUL in them). */
function fields(list: readonly string[]): string {
  let text = "";
  for (let i = 0; i + 1 < list.length; i += 2) text += `${list[i]}: ${list[i + 1]}\r\n`;
  return text;
}
