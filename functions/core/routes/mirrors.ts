import { isCopied, type Mirror } from "../../../store/filters/request-mirror.js";
import { servicePort } from "../../../store/services.js";
import type { ServedRoute } from "../snapshot/served-routes.js";

/** Where one copy of a request goes. */
export interface MirrorTarget {
  readonly service: string;
  readonly ip: string;
  readonly port: number;
  /** The cluster of the endpoint (its backend TLS records, for a port with a BackendTLSPolicy). */
  readonly cluster?: string | undefined;
  /** `https` for a port with a BackendTLSPolicy (copies then go over TLS as requests do); else HTTP/1.1. */
  readonly protocol?: "https" | undefined;
  readonly tls?: { readonly policy: string } | undefined;
}

export const NO_MIRRORS: readonly MirrorTarget[] = [];

/**
 * The copies a request makes (HTTPRequestMirrorFilter): each mirror taken with its percent, to one active
 * endpoint of its Service port, from the clusters the route is served from, IPv4 when there is one. A copy
 * is sent and forgotten: no retries, balancing or ejection (its answer is dropped), and a mirror without
 * endpoints is skipped, as is one whose backends speak only HTTP/2 (h2c ports, GRPCRoute mirrors), or TLS
 * unless the runtime opens TLS to backends (`backendTls`: RoutingDeps.backendTls). `random` returns [0, 1).
 */
export function mirrorTargets(
  served: ServedRoute,
  mirrors: readonly Mirror[] | undefined,
  random: () => number,
  backendTls = false,
): readonly MirrorTarget[] {
  if (!mirrors || mirrors.length === 0) return NO_MIRRORS;
  const targets: MirrorTarget[] = [];
  for (const mirror of mirrors) {
    if (!isCopied(mirror, random)) continue;
    const ports = served.clusters.flatMap((cluster) => {
      const record = cluster.servicesV2.get(mirror.service);
      const port = record ? servicePort(record, mirror.port) : undefined;
      // Copies go over HTTP/1.1, in cleartext or over TLS: an h2c port (and every backend of a GRPCRoute)
      // would read them as garbage, and a port with a BackendTLSPolicy must get none in cleartext.
      const carried = port?.protocol !== "h2c" && (backendTls || port?.protocol !== "https");
      return port && carried && served.route.source !== "grpcroute" ? [{ cluster: cluster.name, port }] : [];
    });
    const ipv4 = ports.flatMap(({ cluster, port }) =>
      port.ipv4.endpoints.map((endpoint) => ({ cluster, port, endpoint })),
    );
    const endpoints =
      ipv4.length > 0
        ? ipv4
        : ports.flatMap(({ cluster, port }) =>
            port.ipv6.endpoints.map((endpoint) => ({ cluster, port, endpoint })),
          );
    const chosen = endpoints[Math.floor(random() * endpoints.length)];
    if (!chosen) continue;
    const { cluster, port, endpoint } = chosen;
    const tls =
      port.protocol === "https" && port.tls ? { protocol: "https" as const, tls: port.tls, cluster } : {};
    targets.push({ service: mirror.service, ip: endpoint.ip, port: endpoint.port, ...tls });
  }
  return targets;
}
