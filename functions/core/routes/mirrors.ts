import type { Mirror } from "../../../store/routes.js";
import { servicePort } from "../../../store/services.js";
import type { ServedRoute } from "../served-routes.js";

/** Where one copy of a request goes. */
export interface MirrorTarget {
  readonly service: string;
  readonly ip: string;
  readonly port: number;
}

export const NO_MIRRORS: readonly MirrorTarget[] = [];

/**
 * The copies a request makes (HTTPRequestMirrorFilter): each mirror taken with its percent, to one active
 * endpoint of its Service port, from the clusters the route is served from, IPv4 when there is one. A copy
 * is sent and forgotten: no retries, balancing or ejection (its answer is dropped), and a mirror without
 * endpoints is skipped, as is one whose backends speak only HTTP/2 (h2c ports, GRPCRoute mirrors) or TLS. `random` returns [0, 1).
 */
export function mirrorTargets(
  served: ServedRoute,
  mirrors: readonly Mirror[] | undefined,
  random: () => number,
): readonly MirrorTarget[] {
  if (!mirrors || mirrors.length === 0) return NO_MIRRORS;
  const targets: MirrorTarget[] = [];
  for (const mirror of mirrors) {
    if (mirror.percent < 100 && random() * 100 >= mirror.percent) continue;
    const ports = served.clusters.flatMap((cluster) => {
      const record = cluster.servicesV2.get(mirror.service);
      const port = record ? servicePort(record, mirror.port) : undefined;
      // Copies go over HTTP/1.1 in cleartext: an h2c port (and every backend of a GRPCRoute) would read them as
      // garbage, and a port with a BackendTLSPolicy must get none in cleartext.
      const cleartext = port?.protocol !== "h2c" && port?.protocol !== "https";
      return port && cleartext && served.route.source !== "grpcroute" ? [port] : [];
    });
    const ipv4 = ports.flatMap((port) => port.ipv4.endpoints);
    const endpoints = ipv4.length > 0 ? ipv4 : ports.flatMap((port) => port.ipv6.endpoints);
    const chosen = endpoints[Math.floor(random() * endpoints.length)];
    if (chosen) targets.push({ service: mirror.service, ip: chosen.ip, port: chosen.port });
  }
  return targets;
}
