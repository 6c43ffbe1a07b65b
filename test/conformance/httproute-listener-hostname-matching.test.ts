import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteListenerHostnameMatching: four listeners on port 80 (bar.com, foo.bar.com, *.bar.com,
 * *.foo.com), routes attached by sectionName; a request is served through the listener its Host matches.
 */
const GATEWAY = "httproute-listener-hostname-matching";
const same = { allowedRoutes: { namespaces: { from: "Same" } } };
const attached = (name: string, service: string, ...sections: string[]) =>
  httpRouteObject(name, {
    parentRefs: sections.map((sectionName) => ({ name: GATEWAY, namespace: INFRA, sectionName })),
    rules: [{ backendRefs: [backend(service)] }],
  });

describeRoutingConformance("HTTPRouteListenerHostnameMatching", {
  objects: [
    gatewayObject(GATEWAY, [
      httpListener("listener-1", 80, { ...same, hostname: "bar.com" }),
      httpListener("listener-2", 80, { ...same, hostname: "foo.bar.com" }),
      httpListener("listener-3", 80, { ...same, hostname: "*.bar.com" }),
      httpListener("listener-4", 80, { ...same, hostname: "*.foo.com" }),
    ]),
    attached("backend-v1", "infra-backend-v1", "listener-1"),
    attached("backend-v2", "infra-backend-v2", "listener-2"),
    attached("backend-v3", "infra-backend-v3", "listener-3", "listener-4"),
  ],
  routes: [{ name: "backend-v1" }, { name: "backend-v2" }, { name: "backend-v3", parents: 2 }],
  cases: [
    { host: "bar.com", path: "/", backend: "infra-backend-v1" },
    { host: "foo.bar.com", path: "/", backend: "infra-backend-v2" },
    { host: "baz.bar.com", path: "/", backend: "infra-backend-v3" },
    { host: "boo.bar.com", path: "/", backend: "infra-backend-v3" },
    { host: "multiple.prefixes.bar.com", path: "/", backend: "infra-backend-v3" },
    { host: "multiple.prefixes.foo.com", path: "/", backend: "infra-backend-v3" },
    { host: "foo.com", path: "/", status: 404 },
    { host: "no.matching.host", path: "/", status: 404 },
  ],
});
