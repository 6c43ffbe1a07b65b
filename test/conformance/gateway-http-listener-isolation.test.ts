import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  backend,
  gatewayObject,
  httpListener,
  httpRouteObject,
  INFRA,
  prefixMatch,
} from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { describeRoutingConformance, type RoutingCase } from "./support/routing-cases.js";

/**
 * Conformance GatewayHTTPListenerIsolation: four listeners on port 80 (none, *.example.com, *.foo.example.com,
 * abc.foo.example.com), one route on each; a request is served only by the routes of the listener whose
 * hostname matches it most specifically. First with hostnames in the listeners only, then (a second Gateway,
 * served by a router of its own as the suite reaches it at its own address) with routes whose hostnames
 * intersect the other listeners' too.
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

const INTERSECTION = "http-listener-isolation-with-hostname-intersection";
const ROUTE_HOSTNAMES = ["bar.com", "*.example.com", "*.foo.example.com", "abc.foo.example.com"];

describe("conformance GatewayHTTPListenerIsolation, intersecting hostnames in listeners and HTTPRoutes", () => {
  let world: Conformance;
  beforeAll(async () => {
    world = await startConformance({
      label: "isolation-intersect",
      routers: { router: `${INFRA}/${INTERSECTION}` },
      objects: [
        gatewayObject(
          INTERSECTION,
          LISTENERS.map(([name, hostname]) =>
            httpListener(name, 80, { ...all, ...(hostname ? { hostname } : {}) }),
          ),
        ),
        ...LISTENERS.map(([name]) =>
          httpRouteObject(`attaches-to-${name}-with-hostname-intersection`, {
            parentRefs: [{ name: INTERSECTION, namespace: INFRA, sectionName: name }],
            hostnames: ROUTE_HOSTNAMES,
            rules: [{ matches: [prefixMatch(`/${name}`)], backendRefs: [backend("infra-backend-v1")] }],
          }),
        ),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it.each(LISTENERS.map(([name]) => name))(
    "accepts the route on listener %s with resolved refs",
    async (name) => {
      const route = `attaches-to-${name}-with-hostname-intersection`;
      const parents = await untilParents(world.cluster.kube, INFRA, route, (found) =>
        acceptedAndResolved(found, 1),
      );
      expect(acceptedAndResolved(parents, 1)).toBe(true);
    },
  );

  it.each(HOSTS.flatMap(([host, own]) => LISTENERS.map(([name]) => [host, name, name === own] as const)))(
    "answers %s %s from its own listener's route only (served: %s)",
    async (host, name, served) => {
      await world.until(
        { host: "abc.foo.example.com", path: "/abc-foo-example-com" },
        (found) => found.echo !== undefined,
      );
      const answer = await world.send({ host, path: `/${name}` });
      if (served) expect(answer.echo?.backend).toBe(`${INFRA}/infra-backend-v1`);
      else expect([answer.status, answer.echo]).toEqual([404, undefined]);
    },
  );
});
