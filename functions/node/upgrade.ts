import { type IncomingMessage, STATUS_CODES } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { AccessLog } from "../core/access-log.js";
import type { ErrorAnswer, RouterError } from "../core/errors.js";
import {
  type ForwardingInfo,
  hasBody,
  reasonPhrase,
  upgradeResponseHeaderList,
  upstreamUpgradeHeaderList,
} from "../core/headers.js";
import { errorAnswerWithRequestId, REQUEST_ID_HEADER, requestIdOf } from "../core/request-id.js";
import { RequestObservation } from "../core/request-observation.js";
import { withRetries } from "../core/retry-loop.js";
import type { Routing } from "../core/routing.js";
import type { RequestTracing } from "../core/tracing.js";
import {
  forwardedProto,
  loggedClient,
  NO_TRUSTED_PROXIES,
  type TrustedProxies,
} from "../core/trusted-proxies.js";
import { clientListenerPort, clientServerName } from "./client-tls.js";
import { connectionFactsOf } from "./connection-facts.js";
import { Handshake } from "./handshake.js";
import { incomingUrl } from "./incoming-url.js";
import { RequestHead } from "./request-head.js";
import { endThenDestroy, joinSockets } from "./tunnel.js";

/**
 * HTTP/1.1 Upgrade (WebSocket) on the Node router. http.Server hands an upgrade request to its 'upgrade'
 * listener with the raw socket instead of the request handler (Node docs: http.Server 'upgrade'), so the
 * Hono app never sees it; this path routes it with the same core (core/routing.ts: the request target of
 * core/request-target.ts, the route table, selection, balancer, ejection, metrics), sends it to a store-listed backend
 * (handshake.ts), and on a 101 joins the two sockets (tunnel.ts).
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

export function createNodeUpgrades(
  routing: Routing,
  accessLog?: AccessLog,
  trusted: TrustedProxies = NO_TRUSTED_PROXIES,
  tracing?: RequestTracing,
): NodeUpgrades {
  const { policy } = routing;
  const { metrics, logger } = policy;
  const open = new Set<Socket>();

  const track = (socket: Socket) => {
    open.add(socket);
    // A socket Node no longer watches must never throw from an 'error' without a listener.
    socket.on("error", (error) => logger.debug("upgrade connection error", { error }));
    socket.once("close", () => open.delete(socket));
  };

  /** An upgrade's access log line, written when its answer's head goes out (a tunnel's bytes are not counted). */
  const log = (observation: RequestObservation, request: IncomingMessage, client: Socket) => {
    if (!observation.takeLogLine()) return;
    observation.bytesCounted = false;
    const { clientIp, trustedPeer } = connectionFactsOf(client, trusted);
    // Node joins repeated X-Forwarded-For lines with ", " (http.IncomingMessage.headers).
    const forwardedFor = () => request.headers["x-forwarded-for"] as string | undefined;
    const entry = observation.entry(performance.now(), Date.now(), {
      client: loggedClient(clientIp, trustedPeer, forwardedFor, trusted),
      host: request.headers.host ?? "",
      path: request.url ?? "",
      protocol: request.httpVersion,
    });
    accessLog?.write(entry);
  };

  const refuse = (
    client: Socket,
    error: RouterError,
    observation: RequestObservation,
    request: IncomingMessage,
  ) => {
    if (error === "client_closed") {
      metrics.requests.client_closed++;
      observation.clientClosed(metrics, performance.now());
      log(observation, request, client);
      client.destroy();
      return;
    }
    ownAnswer(client, errorAnswerWithRequestId(error, observation.requestId), observation, request);
  };

  /** The router's own answer (an error, or a RequestRedirect): the connection closes after it. */
  const ownAnswer = (
    client: Socket,
    answer: ErrorAnswer,
    observation: RequestObservation,
    request: IncomingMessage,
  ) => {
    observation.respond(metrics, answer.status, performance.now(), false);
    log(observation, request, client);
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
    const requestHead = new RequestHead(request.rawHeaders);
    const method = request.method ?? "GET";
    const scheme = (client as Partial<TLSSocket>).encrypted ? "https" : "http";
    const traced = tracing?.enabled
      ? tracing.start(
          {
            method,
            host: requestHead.host ?? "",
            path: request.url ?? "",
            scheme,
            protocol: request.httpVersion,
            client: connectionFactsOf(client, trusted).clientIp,
          },
          (name) => requestHead.get(name),
        )
      : tracing?.untraced;
    const observation = new RequestObservation(
      requestIdOf(requestHead.requestId, () => crypto.randomUUID()),
      method,
      performance.now(),
      accessLog?.sampled() === true,
      traced?.span,
    );
    if (hasBody(request.rawHeaders)) return refuse(client, "bad_request", observation, request);
    if (requestHead.problem !== undefined) return refuse(client, requestHead.problem, observation, request);
    const url = incomingUrl(request);
    if (url === undefined) return refuse(client, "bad_request", observation, request);
    const proto = (client as Partial<TLSSocket>).encrypted ? "https" : "http";
    const facts = connectionFactsOf(client, trusted);
    const routed = await routing.route(url, {
      method: request.method ?? "GET",
      headers: requestHead,
      // Behind a balancer that ended TLS, redirects keep the scheme the client used.
      proto: facts.trustedPeer
        ? forwardedProto(requestHead.get("x-forwarded-proto") ?? undefined, proto)
        : proto,
      serverName: clientServerName(client),
      listenerPort: clientListenerPort(client),
    });
    if (typeof routed === "string") return refuse(client, routed, observation, request);
    if ("redirect" in routed) {
      const { status, location } = routed.redirect;
      const headers: [string, string][] = [
        ["location", location],
        [REQUEST_ID_HEADER, observation.requestId],
      ];
      return ownAnswer(client, { status, headers, body: "" }, observation, request);
    }
    if ("preflight" in routed) {
      const headers: (readonly [string, string])[] = [
        ...routed.preflight,
        [REQUEST_ID_HEADER, observation.requestId],
      ];
      return ownAnswer(client, { status: 200, headers, body: "" }, observation, request);
    }
    observation.routed(metrics, routed.selection);
    if ("error" in routed) return refuse(client, routed.error, observation, request);
    const forwarding: ForwardingInfo = {
      clientIp: facts.clientIp,
      trustedPeer: facts.trustedPeer,
      trace: traced?.fields,
      // The scheme of the connection, never of an absolute-form request target.
      proto,
      host: routed.target.authority,
      requestId: observation.requestId,
      upstreamHost: routed.upstreamHost,
      modifier: routed.plan.requestHeaders,
      connection: requestHead.connection ?? null,
    };
    const handshake = new Handshake(
      client,
      request.method ?? "GET",
      routed.upstreamPath,
      upstreamUpgradeHeaderList(request.rawHeaders, forwarding),
      policy,
    );
    const result = await withRetries(routed.selection, handshake, policy, observation);
    if (!result.ok) return refuse(client, result.error, observation, request);
    const { backend, response, upgraded } = result.value;
    observation.respond(metrics, response.statusCode ?? 0, performance.now(), true);
    log(observation, request, client);
    if (client.destroyed) {
      response.destroy();
      upgraded?.socket.destroy();
      return;
    }
    const head = `${statusLine(response.statusCode ?? 0, response.statusMessage)}${fields(
      upgradeResponseHeaderList(response.rawHeaders, upgraded !== undefined, routed.plan.responseHeaders),
    )}${REQUEST_ID_HEADER}: ${observation.requestId}\r\n\r\n`;
    if (!upgraded) return relay(client, head, response);
    track(upgraded.socket);
    // Field values were decoded as Latin-1 by Node's parser: written back byte for byte.
    client.write(head, "latin1");
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
  client.write(head, "latin1");
  client.once("close", () => response.destroy());
  response.once("error", () => client.destroy());
  response.once("end", () => endThenDestroy(client));
  response.pipe(client, { end: false });
}

function statusLine(status: number, reason: string | undefined): string {
  return `HTTP/1.1 ${status} ${reasonPhrase(reason) ?? STATUS_CODES[status] ?? ""}\r\n`;
}

/** A flat name, value list as header lines (Node's parser already refused CR, LF and NUL in them). */
function fields(list: readonly string[]): string {
  let text = "";
  for (let i = 0; i + 1 < list.length; i += 2) text += `${list[i]}: ${list[i + 1]}\r\n`;
  return text;
}
