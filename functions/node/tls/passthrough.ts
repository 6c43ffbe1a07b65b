import { connect, type Socket } from "node:net";
import type { MetricFamily } from "../../../lib/prometheus.js";
import type { Snapshot } from "../../../store/store.js";
import type { AbortCause, AttemptResult, Attempts, PolicyDeps } from "../../core/forwarding/proxy-policy.js";
import { withRetries } from "../../core/forwarding/retry-loop.js";
import { mostSpecificListener } from "../../core/routes/listener-ports.js";
import { matchPassthrough } from "../../core/routes/passthrough.js";
import type { RouteMatchResult } from "../../core/routes/route-table.js";
import { chooseBackend } from "../../core/routes/weights.js";
import type { Routing } from "../../core/routing.js";
import type { Backend } from "../../core/selection/selection.js";
import type { ServedRoute, SnapshotRoutes } from "../../core/snapshot/served-routes.js";
import { failedAttempt } from "../../transports/connect-errors.js";
import { armAttemptTimer, type CuttableAttempt, refusedAttempt } from "../attempt-bounds.js";
import { joinSockets } from "../tunnel.js";
import type { TlsConnection } from "./tls-front.js";

/** What became of the connections offered to passthrough, for the metrics endpoint. */
type Outcome = "relayed" | "refused" | "failed";

/**
 * TLS passthrough (Gateway API TLSRoute, listener mode Passthrough): a connection whose ClientHello names a
 * host a TLSRoute claims on that listener port goes, bytes as they came, to a backend of that route chosen as
 * any request's is: the rule's weights (an invalid backendRef's share is refused, as TLSRouteRule.backendRefs
 * asks), the Service's selection (family, locality, steering), power-of-two-choices and ejection, and another
 * backend when a connect fails. The router never ends the TLS: the backend's certificate reaches the client.
 * A refused connection is closed without an answer (the Gateway API's "rejecting the connection").
 */
export class PassthroughRelay {
  readonly #routing: Routing;
  readonly #random: () => number;
  readonly #open = new Set<Socket>();
  readonly #outcomes: Record<Outcome, number> = { relayed: 0, refused: 0, failed: 0 };

  constructor(routing: Routing, random: () => number) {
    this.#routing = routing;
    this.#random = random;
  }

  /** The served routes of the current snapshot; undefined before the first load. */
  routes(): SnapshotRoutes | undefined {
    // The routing core's view: clusters quiet past the fail-static bound serve nothing here either.
    const current = this.#routing.source.current();
    // Node's sources hold their snapshot in memory; one that answers later takes no part in passthrough.
    if (current === undefined || current instanceof Promise) return undefined;
    return this.#routing.routesOf(current as Snapshot);
  }

  /** The TLSRoute of the connection's server name on its listener port, if one claims it. */
  match(
    routes: SnapshotRoutes | undefined,
    connection: TlsConnection,
  ): RouteMatchResult<ServedRoute> | undefined {
    return routes && matchPassthrough(routes.passthrough, connection.serverName, connection.listenerPort);
  }

  /**
   * Whether the matched TLSRoute's listener on the connection's port ends TLS (`tls.mode: Terminate`): then
   * the router ends it and relays the decrypted bytes. Among the route's listeners on the port, the one
   * with the most specific hostname for the server name decides (listener isolation).
   */
  terminates(found: RouteMatchResult<ServedRoute>, connection: TlsConnection): boolean {
    const onPort = (found.route.listeners ?? []).filter((item) => item.port === connection.listenerPort);
    const hostname = mostSpecificListener(
      onPort.map((item) => item.listenerHostname ?? ""),
      connection.serverName ?? "",
    );
    const listener = onPort.find((item) => (item.listenerHostname ?? "") === hostname);
    return listener?.tlsMode === "Terminate";
  }

  /** Whether a TLS listener with routes uses this port: there, a name nobody serves is refused, not alerted. */
  usesPort(routes: SnapshotRoutes | undefined, listenerPort: number): boolean {
    return routes?.passthrough.listenerPorts.has(listenerPort) === true;
  }

  /** Relays the connection to a backend of the matched route, or closes it when there is none to reach. */
  relay(connection: TlsConnection, found: RouteMatchResult<ServedRoute>): void {
    const { socket } = connection;
    const choice = chooseBackend(found.rule.backends, this.#random);
    const selection =
      choice.kind === "service"
        ? this.#routing.steering.steer(
            this.#routing.select(found.entry, found.ruleIndex, choice.index),
            undefined,
          )
        : undefined;
    if (!selection || selection.unresolved || selection.addresses.length === 0) {
      this.refuse(socket);
      return;
    }
    const policy = this.#routing.policy;
    this.#open.add(socket);
    socket.on("error", (error) => policy.logger.debug("passthrough client connection error", { error }));
    socket.once("close", () => this.#open.delete(socket));
    withRetries(selection, new TcpConnects(socket, policy), policy).then(
      (result) => {
        if (!result.ok) {
          this.#outcomes.failed++;
          socket.destroy();
          return;
        }
        const { backend, socket: upstream } = result.value;
        if (socket.destroyed) {
          upstream.destroy();
          return;
        }
        this.#outcomes.relayed++;
        this.#open.add(upstream);
        upstream.once("close", () => this.#open.delete(upstream));
        // An open tunnel counts as in flight on its backend until it closes (least connections, as upgrade.ts).
        policy.balancer.acquire(backend.address);
        joinSockets(socket, upstream, connection.hello, () => policy.balancer.release(backend.address));
      },
      (error: unknown) => {
        policy.logger.warn("passthrough failed", { error });
        this.#outcomes.failed++;
        socket.destroy();
      },
    );
  }

  /** Closes a connection no backend takes (a name, backendRef or Service without a usable backend). */
  refuse(socket: Socket): void {
    this.#outcomes.refused++;
    socket.destroy();
  }

  /** Every relayed connection, both sides (the router's close, once its drain bound is over). */
  destroyAll(): void {
    for (const socket of this.#open) socket.destroy();
  }

  families(): MetricFamily[] {
    return [
      {
        name: "edgeslice_tls_passthrough_connections_total",
        type: "counter",
        help: "TLS connections a TLSRoute claimed: relayed to a backend, refused (no usable backend), or failed (no backend connected).",
        samples: (Object.keys(this.#outcomes) as Outcome[]).map((outcome) => ({
          labels: { outcome },
          value: this.#outcomes[outcome],
        })),
      },
    ];
  }
}

/** A backend's connection, once made. */
interface Connected {
  readonly backend: Backend;
  readonly socket: Socket;
}

/**
 * The attempts of one passthrough connection: a TCP connect to a backend, bounded by the try and total
 * timeouts (the connect is the whole attempt: nothing is sent before it succeeds, so a failure may always go
 * to another backend).
 */
class TcpConnects implements Attempts<Connected> {
  readonly method = "CONNECT";
  readonly #policy: PolicyDeps;
  readonly #deadline: number;
  #clientGone = false;
  #current: CuttableAttempt | undefined;

  constructor(client: Socket, policy: PolicyDeps) {
    this.#policy = policy;
    this.#deadline = Date.now() + policy.settings.totalTimeoutMs;
    client.once("close", () => {
      this.#clientGone = true;
      this.#current?.cut("client-gone");
    });
  }

  canResend(): boolean {
    return true;
  }

  attempt(backend: Backend): Promise<AttemptResult<Connected>> {
    const remaining = this.#deadline - Date.now();
    const refused = refusedAttempt(this.#clientGone, remaining);
    if (refused) return Promise.resolve(refused);
    const policy = this.#policy;
    return new Promise((resolve) => {
      let settled = false;
      const upstream = connect({ host: backend.ip, port: backend.port });
      const settle = (result: AttemptResult<Connected>) => {
        settled = true;
        timer.cancel();
        this.#current = undefined;
        resolve(result);
      };
      const fail = (cause: AbortCause | undefined, error: unknown) => {
        if (settled) return;
        upstream.destroy();
        settle(failedAttempt(backend, cause, error, policy));
      };
      const attempt: CuttableAttempt = {
        cut: (cause) => fail(cause, new Error(`passthrough connect cut: ${cause}`)),
      };
      this.#current = attempt;
      const timer = armAttemptTimer(attempt, remaining, policy.settings.tryTimeoutMs);
      upstream.on("error", (error) => {
        if (settled) policy.logger.debug("passthrough backend connection error", { error });
        else fail(undefined, error);
      });
      upstream.once("connect", () => {
        if (settled) return;
        policy.ejection.recordSuccess(backend.address);
        settle({ ok: true, value: { backend, socket: upstream } });
      });
    });
  }
}
