import { X509Certificate } from "node:crypto";
import { serviceId } from "../store/names.js";
import { endpointAddress, type FamilyRecord } from "../store/records.js";
import { serializeRoute } from "../store/store.js";
import { cacheFromObjects } from "./kube/manifests.js";
import { translateService } from "./translate/backends.js";
import { desiredRoutes, type RouteSettings } from "./translate/desired-routes.js";
import type { CertificateUse } from "./translate/gateway/certificate-refs.js";
import { type KubeEndpointSlice, type KubeService, namespaceOf } from "./translate/kube-objects.js";
import type { RouteObjects } from "./translate/route-objects.js";

/**
 * `--print`: one JSON line per port of every Service (exposed or not, so the translation itself can be
 * checked), in the user-contract format with its exact key order. Lines are sorted by service, then port;
 * two ports with one number (TCP and UDP) keep their spec order.
 */
export function printLines(
  cluster: string,
  services: readonly KubeService[],
  slices: readonly KubeEndpointSlice[],
): string[] {
  const cache = cacheFromObjects(services, slices);
  const rows = cache.services().flatMap((service) => {
    const namespace = namespaceOf(service);
    const id = serviceId(namespace, service.metadata.name);
    const ports = translateService(service, cache.slicesOf(namespace, service.metadata.name));
    return ports.map((entry, order) => ({ id, port: entry.port.number, order, entry }));
  });
  rows.sort(
    (left, right) => compareText(left.id, right.id) || left.port - right.port || left.order - right.order,
  );
  return rows.map(({ id, port, entry }) =>
    JSON.stringify({
      cluster,
      service: id,
      port,
      ipv4: printedFamily(entry.ipv4),
      ipv6: printedFamily(entry.ipv6),
    }),
  );
}

function printedFamily(family: FamilyRecord): { endpoints: string[]; fallback: boolean; draining: string[] } {
  return {
    endpoints: family.endpoints.map(endpointAddress),
    fallback: family.fallback,
    draining: family.draining.map(endpointAddress),
  };
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Something `--print` leaves out or trims, named on stderr once per folder read. */
export interface PrintWarning {
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/**
 * `--print`, after the per-port lines: one JSON line per route the cluster would publish (annotation routes,
 * HTTPRoutes attached to our Gateways, our Ingresses; HOST_CLAIMS applied), sorted by id: `cluster`, `route`
 * (the id) and the record's fields as stored, then what stops it from serving everything it asks for:
 * `conflicts` (host, match and the route served instead) and `refusedHosts` (HOST_CLAIMS). `warnings` name,
 * once each and with the live sync's words, what the lines cannot show: invalid annotations, the parts of
 * HTTPRoutes and Ingresses the translation did not apply, and records that do not validate.
 */
export function printRoutes(
  cluster: string,
  services: readonly KubeService[],
  routeObjects: RouteObjects,
  settings: RouteSettings,
): { lines: string[]; warnings: PrintWarning[]; certificates: readonly CertificateUse[] } {
  const desired = desiredRoutes({ services, objects: routeObjects, settings });
  const lines: string[] = [];
  const warnings: PrintWarning[] = [
    ...desired.invalidAnnotations.map(({ service, reason }) => ({
      message: "service annotations invalid, not routed",
      fields: { service, reason },
    })),
    ...desired.problems.map(({ object, reason }) => ({
      message: "route object not fully applied",
      fields: { object, reason },
    })),
  ];
  for (const [id, route] of desired.routes) {
    let stored: Record<string, unknown>;
    try {
      stored = JSON.parse(serializeRoute(route)) as Record<string, unknown>;
    } catch (error) {
      warnings.push({ message: "route record left out: it does not validate", fields: { route: id, error } });
      continue;
    }
    const { v: _version, id: _id, ...fields } = stored;
    const conflicts = desired.conflicts
      .filter((conflict) => conflict.loser === id)
      .map(({ host, match, winner }) => ({ host, match, servedBy: winner }));
    const refused = desired.refusedClaims.filter((claim) => claim.route === id).map((claim) => claim.host);
    lines.push(
      JSON.stringify({
        cluster,
        route: id,
        ...fields,
        ...(conflicts.length > 0 ? { conflicts } : {}),
        ...(refused.length > 0 ? { refusedHosts: refused } : {}),
      }),
    );
  }
  return { lines, warnings, certificates: desired.certificates };
}

/**
 * `--print`, last: one JSON line per certificate the cluster would publish (a Secret an HTTPS listener of our
 * Gateways references), sorted by Secret: `cluster`, `certificate` (the Secret), the `hostnames` a router
 * chooses it for (`anyHost`: also for any SNI no other certificate names), then what it is (its leaf's
 * subject, issuer, DNS names and validity, how many certificates the chain holds, its version). Never the
 * key: the sync seals it under TLS_STORE_KEY as it writes it, and prints nothing of it.
 */
export function printCertificates(cluster: string, uses: readonly CertificateUse[]): string[] {
  return [...uses]
    .sort((left, right) => compareText(left.id, right.id))
    .map((use) => {
      const leaf = new X509Certificate(use.material.cert);
      return JSON.stringify({
        cluster,
        certificate: use.id,
        hostnames: use.hostnames,
        ...(use.anyHost ? { anyHost: true } : {}),
        subject: leaf.subject,
        issuer: leaf.issuer,
        names: use.material.names,
        notBefore: new Date(leaf.validFrom).toISOString(),
        notAfter: new Date(leaf.validTo).toISOString(),
        chain: use.material.cert.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0,
        version: use.material.version,
      });
    });
}
