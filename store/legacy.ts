import type { ServiceRecord } from "./records.js";
import { ROUTE_SCHEMA_VERSION, type RouteRecord, routeId } from "./routes.js";

/**
 * The route of a schema version 1 service record: where its `edgeslice.io/*` annotations exposed it, as a
 * route record of version 2. Routers derive it for every version 1 record (a sync that is not upgraded yet
 * writes no route records they read), and the sync translates its annotations with the same function, so a
 * Service is routed the same way before and after its sync is upgraded.
 *
 * The hosts of `edgeslice.io/hosts` (a leading `*.` covers exactly one label, as before), one PathPrefix
 * match on `edgeslice.io/path-prefix`, the port chosen by `edgeslice.io/port`, weight 1.
 *
 * `createdAt` defaults to 0, which keeps version 1's rule when two Services claim the same host and prefix
 * (the lexically first Service wins: route ids are then compared) and lets annotation routes win exact ties
 * against HTTPRoutes and Ingresses; pass the Service's creationTimestamp (ms) to rank them by age instead.
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

/** The id of the route a version 1 record of `service` stands for. */
export function annotationRouteId(service: string): string {
  const [namespace = "", name = ""] = service.split("/");
  return routeId("annotation", namespace, name);
}
