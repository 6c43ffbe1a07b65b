import {
  backend,
  gatewayObject,
  httpListener,
  httpRouteObject,
  INFRA,
  prefixMatch,
} from "./support/conformance-base.js";
import { describeRoutingConformance, type RoutingCase } from "./support/routing-cases.js";

/**
 * Conformance GatewayHTTPListenerIsolation (its first part, hostnames in the listeners only): four listeners
 * on port 80 (none, *.example.com, *.foo.example.com, abc.foo.example.com), one route on each; a request is
 * served only by the routes of the listener whose hostname matches it most specifically.
 */
const GATEWAY = "http-listener-isolation";
const LISTENERS: [string, string | undefined][] = [
  ["empty-hostname", undefined],
  ["wildcard-example-com", "*.example.com"],
  ["wildcard-foo-example-com", "*.foo.example.com"],
  ["abc-foo-example-com", "abc.foo.example.com"],
];
const all = { allowedRoutes: { namespaces: { from: "All" } } };
const HOSTS: [string, string][] = [
  ["bar.com", "empty-hostname"],
  ["bar.example.com", "wildcard-example-com"],
  ["bar.foo.example.com", "wildcard-foo-example-com"],
  ["abc.foo.example.com", "abc-foo-example-com"],
];

describeRoutingConformance("GatewayHTTPListenerIsolation", {
  objects: [
    gatewayObject(
      GATEWAY,
      LISTENERS.map(([name, hostname]) =>
        httpListener(name, 80, { ...all, ...(hostname ? { hostname } : {}) }),
      ),
    ),
    ...LISTENERS.map(([name]) =>
      httpRouteObject(`attaches-to-${name}`, {
        parentRefs: [{ name: GATEWAY, namespace: INFRA, sectionName: name }],
        rules: [{ matches: [prefixMatch(`/${name}`)], backendRefs: [backend("infra-backend-v1")] }],
      }),
    ),
  ],
  routes: LISTENERS.map(([name]) => ({ name: `attaches-to-${name}` })),
  cases: HOSTS.flatMap(([host, own]) =>
    LISTENERS.map(
      ([name]): RoutingCase =>
        name === own
          ? { host, path: `/${name}`, backend: "infra-backend-v1" }
          : { host, path: `/${name}`, status: 404 },
    ),
  ),
});
