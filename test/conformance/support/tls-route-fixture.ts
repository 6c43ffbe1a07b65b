import { sliceObject } from "../../fake-kube/fixtures.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import { createTestAuthority, type TestAuthority, tlsSecret } from "../../support/certificates.js";
import {
  dialTls,
  startTcpBackend,
  startTlsBackend,
  type TlsBackend,
  type TlsDial,
} from "../../support/tls-backend.js";
import { GATEWAY_API, INFRA } from "./conformance-base.js";
import { acceptedAndResolved, type ParentConditions, untilParents } from "./route-parents.js";
import { startTlsConformance, type TlsConformance } from "./tls-fixture.js";

/**
 * The backends the official TLSRoute tests pass connections to (gateway-api v1.6.1 conformance/base):
 * `tls-backend` and `tls-backend-2` on port 443 and `tcp-backend` on 8443, each a loopback server that ends TLS
 * itself with a certificate for `abc.example.com` and `*.example.com` (the suite's `tls-checks-certificate`),
 * issued at test time, and names itself and the SNI it was asked for (test/support/tls-backend.ts).
 * `tcp-backend` also serves port 3000 in cleartext (the suite's l4 backend, where Terminate listeners' TLSRoutes
 * send the decrypted bytes): a loopback server greeting the same way, with no SNI (`sni=-`).
 */
const TLS_BACKENDS = [
  { name: "tls-backend", port: 443 },
  { name: "tls-backend-2", port: 443 },
  { name: "tcp-backend", port: 8443 },
] as const;

export interface TlsRouteConformance extends TlsConformance {
  /** The authority of the backends' certificate (the suite's `tls-checks-ca-certificate`). */
  readonly ca: TestAuthority;
  /**
   * A TLS connection with this SNI, trusting `ca`, to router `router`'s (default the first) Gateway listener
   * port `listenerPort` (default 443).
   */
  dial(serverName: string, router?: string, listenerPort?: number): Promise<TlsDial>;
  /** Dials until `done` holds for the outcome (the sync published, the router reloaded), or 10 s passed. */
  dialUntil(
    serverName: string,
    done: (dial: TlsDial) => boolean,
    router?: string,
    listenerPort?: number,
  ): Promise<TlsDial>;
  /** TLSRoute `name`'s parents, once every one is Accepted with its refs resolved (or 5 s passed). */
  acceptedRoute(name: string, parents?: number): Promise<ParentConditions[]>;
  /** TLSRoute `name`'s parents once `done` holds (or 5 s passed). */
  routeParents(
    name: string,
    done: (parents: readonly ParentConditions[]) => boolean,
  ): Promise<ParentConditions[]>;
}

export async function startTlsRouteConformance(options: {
  readonly label: string;
  readonly objects: readonly ApplyInput[];
  /** One router per entry and its GATEWAYS (the suite gives each Gateway an address of its own). */
  readonly routers?: Readonly<Record<string, string | undefined>>;
  /** Router settings, e.g. HTTPS_LISTENER_PORTS for listeners on other ports than 443. */
  readonly env?: Readonly<Record<string, string>>;
}): Promise<TlsRouteConformance> {
  const ca = createTestAuthority("gateway-conformance tls-checks CA");
  const certificate = ca.issue(["abc.example.com", "*.example.com"]);
  const backends: TlsBackend[] = [];
  try {
    for (const { name } of TLS_BACKENDS) backends.push(await startTlsBackend(name, certificate));
    backends.push(await startTcpBackend("tcp-backend"));
  } catch (error) {
    for (const backend of backends) await backend.close();
    throw error;
  }
  const services = TLS_BACKENDS.flatMap(({ name, port }, index) => {
    const backend = backends[index] as TlsBackend;
    const cleartext = name === "tcp-backend" ? backends[TLS_BACKENDS.length] : undefined;
    return [
      {
        kind: "Service",
        metadata: { name, namespace: INFRA },
        spec: {
          type: "ClusterIP",
          ports: [
            { name: "tls", port, protocol: "TCP" },
            ...(cleartext ? [{ name: "tcp", port: 3000, protocol: "TCP" }] : []),
          ],
        },
      },
      {
        ...sliceObject(INFRA, `${name}-1`, name, [backend.host]),
        ports: [
          { name: "tls", port: backend.port, protocol: "TCP" },
          ...(cleartext ? [{ name: "tcp", port: cleartext.port, protocol: "TCP" }] : []),
        ],
      },
    ];
  });
  // The suite's Secret for Terminate listeners (tls.example.com), issued by the same authority.
  const terminateSecret = tlsSecret(INFRA, "tls-terminate-checks-certificate", ca.issue(["tls.example.com"]));
  let world: TlsConformance;
  try {
    world = await startTlsConformance({
      label: options.label,
      objects: [...services, terminateSecret, ...options.objects],
      ...(options.routers ? { routers: options.routers } : {}),
      ...(options.env ? { env: options.env } : {}),
    });
  } catch (error) {
    for (const backend of backends) await backend.close();
    throw error;
  }
  const kube = world.cluster.kube;
  const dial = (serverName: string, router?: string, listenerPort?: number) =>
    dialTls(world.tlsPort(router, listenerPort), serverName, { ca: ca.cert, timeoutMs: 2_000 });
  return {
    ...world,
    ca,
    dial,
    async dialUntil(serverName, done, router, listenerPort) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const outcome = await dial(serverName, router, listenerPort);
        if (done(outcome) || Date.now() > deadline) return outcome;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    acceptedRoute: (name, parents = 1) =>
      untilParents(kube, INFRA, name, (found) => acceptedAndResolved(found, parents), 5_000, "TLSRoute"),
    routeParents: (name, done) => untilParents(kube, INFRA, name, done, 5_000, "TLSRoute"),
    async stop() {
      await world.stop();
      for (const backend of backends) await backend.close();
    },
  };
}

/** A TLSRoute of the infra namespace (gateway.networking.k8s.io/v1, the v1.6.1 standard channel). */
export function tlsRouteObject(name: string, spec: Record<string, unknown>, namespace = INFRA): ApplyInput {
  return { apiVersion: GATEWAY_API, kind: "TLSRoute", metadata: { name, namespace, generation: 1 }, spec };
}

/** A Passthrough TLS listener on 443 taking TLSRoutes of its namespace. */
export function passthroughListener(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    port: 443,
    protocol: "TLS",
    allowedRoutes: { namespaces: { from: "Same" }, kinds: [{ kind: "TLSRoute" }] },
    tls: { mode: "Passthrough" },
    ...extra,
  };
}

/** A Terminate TLS listener taking TLSRoutes of its namespace, ending TLS with the suite's terminate Secret. */
export function terminateListener(name: string, port: number, extra: Record<string, unknown> = {}) {
  return {
    name,
    port,
    protocol: "TLS",
    hostname: "tls.example.com",
    allowedRoutes: { namespaces: { from: "Same" }, kinds: [{ kind: "TLSRoute" }] },
    tls: { mode: "Terminate", certificateRefs: [{ name: "tls-terminate-checks-certificate" }] },
    ...extra,
  };
}

/** A connection the router closed without a TLS answer: the suite's "connection rejected" (EOF or reset). */
export const rejected = (dial: TlsDial) => dial.error === "ECONNRESET" || dial.error === "closed";
