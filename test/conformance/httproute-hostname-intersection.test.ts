import { expect, it } from "vitest";
import {
  backend,
  gatewayObject,
  httpListener,
  httpRouteObject,
  INFRA,
  prefixMatch,
} from "./support/conformance-base.js";
import { asFound, untilListeners, workingListener } from "./support/gateway-listeners.js";
import { untilParents } from "./support/route-parents.js";
import { describeRoutingConformance, type RoutingCase } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteHostnameIntersection: routes attach to the listeners whose hostname intersects
 * theirs and serve only the intersection; a route intersecting none is Accepted=False
 * (NoMatchingListenerHostname) and counted on no listener; a listener without hostname serves each of the
 * route's hostnames.
 */
const GATEWAY = "httproute-hostname-intersection";
const ALL = "httproute-hostname-intersection-all";
const same = { allowedRoutes: { namespaces: { from: "Same" } } };
const route = (name: string, gateway: string, hostnames: string[], path: string, service: string) =>
  httpRouteObject(name, {
    parentRefs: [{ name: gateway, namespace: INFRA }],
    hostnames,
    rules: [{ matches: [prefixMatch(path)], backendRefs: [backend(service)] }],
  });
const v1 = "infra-backend-v1";
const v2 = "infra-backend-v2";
const v3 = "infra-backend-v3";
const served = (host: string, path: string, service: string): RoutingCase => ({
  host,
  path,
  backend: service,
});
const notFound = (host: string, path: string): RoutingCase => ({ host, path, status: 404 });

describeRoutingConformance("HTTPRouteHostnameIntersection", {
  objects: [
    gatewayObject(GATEWAY, [
      httpListener("listener-1", 80, { ...same, hostname: "very.specific.com" }),
      httpListener("listener-2", 80, { ...same, hostname: "*.wildcard.io" }),
      httpListener("listener-3", 80, { ...same, hostname: "*.anotherwildcard.io" }),
    ]),
    route(
      "specific-host-matches-listener-specific-host",
      GATEWAY,
      ["non.matching.com", "*.nonmatchingwildcard.io", "very.specific.com"],
      "/s1",
      v1,
    ),
    route(
      "specific-host-matches-listener-wildcard-host",
      GATEWAY,
      ["non.matching.com", "wildcard.io", "foo.wildcard.io", "bar.wildcard.io", "foo.bar.wildcard.io"],
      "/s2",
      v2,
    ),
    route(
      "wildcard-host-matches-listener-specific-host",
      GATEWAY,
      ["non.matching.com", "*.specific.com"],
      "/s3",
      v3,
    ),
    route("wildcard-host-matches-listener-wildcard-host", GATEWAY, ["*.anotherwildcard.io"], "/s4", v1),
    route("no-intersecting-hosts", GATEWAY, ["specific.but.wrong.com", "wildcard.io"], "/s5", v2),
    gatewayObject(ALL, [httpListener("listener-1", 80, same)]),
    route(ALL, ALL, ["first.com", "*.first.com", "second.com", "*.second.com"], "/", v2),
  ],
  routes: [
    { name: "specific-host-matches-listener-specific-host" },
    { name: "specific-host-matches-listener-wildcard-host" },
    { name: "wildcard-host-matches-listener-specific-host" },
    { name: "wildcard-host-matches-listener-wildcard-host" },
    { name: ALL },
  ],
  cases: [
    served("very.specific.com", "/s1", v1),
    // The port in Host is not part of the hostname match.
    served("very.specific.com:1234", "/s1", v1),
    notFound("non.matching.com", "/s1"),
    notFound("foo.nonmatchingwildcard.io", "/s1"),
    notFound("foo.wildcard.io", "/s1"),
    notFound("very.specific.com", "/non-matching-prefix"),
    served("foo.wildcard.io", "/s2", v2),
    served("bar.wildcard.io", "/s2", v2),
    served("foo.bar.wildcard.io", "/s2", v2),
    notFound("non.matching.com", "/s2"),
    notFound("wildcard.io", "/s2"),
    notFound("very.specific.com", "/s2"),
    notFound("foo.wildcard.io", "/non-matching-prefix"),
    served("very.specific.com", "/s3", v3),
    notFound("non.matching.com", "/s3"),
    notFound("foo.specific.com", "/s3"),
    notFound("foo.wildcard.io", "/s3"),
    notFound("very.specific.com", "/non-matching-prefix"),
    served("foo.anotherwildcard.io", "/s4", v1),
    served("bar.anotherwildcard.io", "/s4", v1),
    served("foo.bar.anotherwildcard.io", "/s4", v1),
    notFound("anotherwildcard.io", "/s4"),
    notFound("foo.wildcard.io", "/s4"),
    notFound("very.specific.com", "/s4"),
    notFound("foo.anotherwildcard.io", "/non-matching-prefix"),
    notFound("specific.but.wrong.com", "/s5"),
    notFound("wildcard.io", "/s5"),
    served("first.com", "/", v2),
    served("sub.first.com", "/", v2),
    served("second.com", "/", v2),
    served("sub.second.com", "/", v2),
    notFound("third.com", "/"),
    notFound("sub.third.com", "/"),
  ],
  more: (world) => {
    it("does not accept HTTPRoute no-intersecting-hosts: NoMatchingListenerHostname", async () => {
      const refused = (parents: readonly { conditions: readonly string[] }[]) =>
        parents.length === 1 &&
        parents[0]?.conditions.includes("Accepted=False/NoMatchingListenerHostname") === true;
      const parents = await untilParents(world().cluster.kube, INFRA, "no-intersecting-hosts", refused);
      expect(parents).toEqual([
        {
          parent: GATEWAY,
          conditions: expect.arrayContaining(["Accepted=False/NoMatchingListenerHostname"]),
        },
      ]);
    });

    it("counts on each listener only the routes accepted through it", async () => {
      const expected = [
        workingListener("listener-1", 2),
        workingListener("listener-2", 1),
        workingListener("listener-3", 1),
      ];
      const found = await untilListeners(world().cluster.kube, GATEWAY, expected);
      expect(found).toEqual(asFound(expected));
    });
  },
});
