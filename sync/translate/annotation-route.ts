import type { ServiceRecord } from "../../store/records.js";
import { ROUTE_SCHEMA_VERSION, type RouteRecord, routeId } from "../../store/routes.js";

/**
 * Today's annotation exposure as a route record of schema version 2: the hosts of `edgeslice.io/hosts`
 * (a leading `*.` covers exactly one label, as before), one PathPrefix match on `edgeslice.io/path-prefix`,
 * the port chosen by `edgeslice.io/port`. `record` is what exposeService (exposure.ts) returned as exposed,
 * so every annotation rule stays where it is.
 *
 * `createdAt` defaults to 0, which keeps today's rule when two Services claim the same host and prefix (the
 * lexically first Service wins: ids are then compared) and lets annotation routes win exact ties against
 * HTTPRoutes and Ingresses; pass the Service's creationTimestamp (ms) to rank them by age instead.
 */
export function annotationRoute(record: ServiceRecord, createdAt = 0): RouteRecord {
  const [namespace = "", name = ""] = record.service.split("/");
  return {
    v: ROUTE_SCHEMA_VERSION,
    id: routeId("annotation", namespace, name),
    source: "annotation",
    createdAt,
    hostnames: [...record.hosts],
    wildcard: "one-label",
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: record.pathPrefix }, headers: [] }],
        filters: {},
        backends: [{ service: record.service, port: record.port.number, weight: 1 }],
      },
    ],
  };
}
