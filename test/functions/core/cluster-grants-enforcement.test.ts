import { describe, expect, it } from "vitest";
import { matchRequest } from "../../../functions/core/routing.js";
import { backendCandidates, selectTiers } from "../../../functions/core/selection/selector.js";
import { buildSnapshotRoutes } from "../../../functions/core/snapshot/snapshot-routes.js";
import { type ClusterGrants, parseClusterGrants } from "../../../functions/core/trust/cluster-grants.js";
import type { EndpointRecord } from "../../../store/records.js";
import type { RouteRecord } from "../../../store/routes.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { type ClusterFixture, snapshotOf } from "../fixtures.js";

/**
 * CLUSTER_GRANTS against a cluster whose sync credential is the attacker's: "evil" (granted *.evil.test and
 * 10.9.0.0/16, and a name that sorts before its victim's) tries every way to reach pay.test, which "pay" serves
 * from 10.2.0.5. Each row says where the request goes without grants (today's behaviour, the attack working)
 * and with them.
 */
const GRANTS =
  "pay=hosts:pay.test,*.pay.test networks:10.2.0.0/16; evil=hosts:*.evil.test networks:10.9.0.0/16,fd00:9::/64";
const VICTIM_POD = "10.2.0.5:8080";
const EVIL_POD = "10.9.0.5:8080";

const to = (service: string) => ({ service, port: 80, weight: 1 });
const service = (cluster: string, id: string, ipv4: EndpointRecord[], ipv6: EndpointRecord[] = []) =>
  serviceRecordV2({ cluster, service: id, ports: [{ number: 80, ipv4, ipv6 }] });
const victimRoute = routeRecord("httproute:pay/web", {
  hostnames: ["pay.test"],
  createdAt: 5_000,
  rules: [routeRule([to("pay/web")])],
});
const victim = (extra: Partial<ClusterFixture> = {}): ClusterFixture => ({
  name: "pay",
  services: [service("pay", "pay/web", [endpoint("10.2.0.5", 8080)])],
  routes: [victimRoute],
  ...extra,
});
const evilPods = [service("evil", "evil/web", [endpoint("10.9.0.5", 8080)])];
const evil = (routes: RouteRecord[], services = evilPods, extra: Partial<ClusterFixture> = {}) => ({
  name: "evil",
  services,
  routes,
  ...extra,
});
const exactLogin = { matches: [{ path: { type: "Exact" as const, value: "/login" }, headers: [] }] };

function grantsOf(text: string): ClusterGrants {
  const parsed = parseClusterGrants(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

/** The backends a GET goes to (every tier, sorted), or the router's answer when it goes nowhere. */
function answer(clusters: ClusterFixture[], grants: ClusterGrants | undefined, url: string): string {
  const [host = "", path = "/"] = url.split(/(?=\/)/);
  const routes = buildSnapshotRoutes(snapshotOf(clusters), grants);
  const found = matchRequest(routes, host, { path, method: "GET", headers: new Headers() });
  if (!found) return "404";
  const ref = found.rule.backends[0];
  if (!ref || !("service" in ref)) return "500";
  const policy = { ipFamily: "PreferIPv4" as const, cluster: undefined, zone: undefined };
  const selection = selectTiers(ref.service, backendCandidates(found.entry, ref.service, ref.port), policy);
  const addresses = [...selection.addresses].sort();
  return addresses.length > 0 ? addresses.join(" ") : "503";
}

describe("a cluster's credential against another cluster's host, with and without CLUSTER_GRANTS", () => {
  it.each<[string, ClusterFixture[], string, string, string]>([
    [
      "a route for the victim's host with an older creationTimestamp",
      [
        victim(),
        evil([
          routeRecord("httproute:evil/steal", {
            hostnames: ["pay.test"],
            createdAt: 1,
            rules: [routeRule([to("evil/web")])],
          }),
        ]),
      ],
      "pay.test/login",
      EVIL_POD,
      VICTIM_POD,
    ],
    [
      "a more specific Exact /login match for the victim's host",
      [
        victim(),
        evil([
          routeRecord("httproute:evil/login", {
            hostnames: ["pay.test"],
            createdAt: 9_000,
            rules: [routeRule([to("evil/web")], exactLogin)],
          }),
        ]),
      ],
      "pay.test/login",
      EVIL_POD,
      VICTIM_POD,
    ],
    [
      "a wildcard that covers hosts granted to the victim",
      [
        victim(),
        evil([
          routeRecord("httproute:evil/wide", {
            hostnames: ["*.pay.test"],
            rules: [routeRule([to("evil/web")])],
          }),
        ]),
      ],
      "new.pay.test/",
      EVIL_POD,
      "404",
    ],
    [
      "a route without hostnames, which serves every host no other route takes",
      [
        victim(),
        evil([routeRecord("httproute:evil/any", { hostnames: [], rules: [routeRule([to("evil/web")])] })]),
      ],
      "other.pay.test/",
      EVIL_POD,
      "404",
    ],
    [
      "an identical copy of the victim's route (copies merge across clusters) over its own pay/web pods",
      [victim(), evil([victimRoute], [service("evil", "pay/web", [endpoint("10.9.0.5", 8080)])])],
      "pay.test/",
      `${VICTIM_POD} ${EVIL_POD}`,
      VICTIM_POD,
    ],
    [
      "the victim's route id for a host of its own (a definition conflict its name would win)",
      [
        victim(),
        evil([{ ...victimRoute, hostnames: ["a.evil.test"], rules: [routeRule([to("evil/web")])] }]),
      ],
      "pay.test/",
      "404",
      VICTIM_POD,
    ],
    [
      "only a service record named like the victim's Service",
      [victim(), evil([], [service("evil", "pay/web", [endpoint("10.9.0.5", 8080)])])],
      "pay.test/",
      VICTIM_POD,
      VICTIM_POD,
    ],
    [
      "its own granted host sent to the victim's pod address",
      [
        victim(),
        evil(
          [
            routeRecord("httproute:evil/web", {
              hostnames: ["a.evil.test"],
              rules: [routeRule([to("evil/web")])],
            }),
          ],
          [service("evil", "evil/web", [endpoint("10.9.0.5", 8080), endpoint("10.2.0.5", 8080)])],
        ),
      ],
      "a.evil.test/",
      `${VICTIM_POD} ${EVIL_POD}`,
      EVIL_POD,
    ],
    [
      "its own granted host sent to the victim's pod as an IPv4-mapped IPv6 address",
      [
        victim(),
        evil(
          [
            routeRecord("httproute:evil/web", {
              hostnames: ["a.evil.test"],
              rules: [routeRule([to("evil/web")])],
            }),
          ],
          [service("evil", "evil/web", [], [endpoint("::ffff:10.2.0.5", 8080)])],
        ),
      ],
      "a.evil.test/",
      "[::ffff:10.2.0.5]:8080",
      "503",
    ],
    [
      "the victim's route id, fresh, while the victim's sync is down (fail static would drop the stale copy)",
      [
        victim({ stale: true }),
        evil([{ ...victimRoute, hostnames: ["a.evil.test"], rules: [routeRule([to("evil/web")])] }]),
      ],
      "pay.test/",
      "404",
      VICTIM_POD,
    ],
    [
      "a cluster the grants do not list at all",
      [
        victim(),
        {
          name: "north",
          services: [service("north", "north/web", [endpoint("10.7.0.5", 8080)])],
          routes: [
            routeRecord("httproute:north/steal", {
              hostnames: ["pay.test"],
              createdAt: 1,
              rules: [routeRule([to("north/web")])],
            }),
          ],
        },
      ],
      "pay.test/",
      "10.7.0.5:8080",
      VICTIM_POD,
    ],
  ])("%s", (_attack, clusters, url, withoutGrants, withGrants) => {
    expect(answer(clusters, undefined, url)).toBe(withoutGrants);
    expect(answer(clusters, grantsOf(GRANTS), url)).toBe(withGrants);
  });

  it("serves the attacker's own granted host beside the victim's route of the same id, each under its clusters' name", () => {
    const clusters = [
      victim(),
      evil([{ ...victimRoute, hostnames: ["a.evil.test"], rules: [routeRule([to("evil/web")])] }]),
    ];
    const routes = buildSnapshotRoutes(snapshotOf(clusters), grantsOf(GRANTS));
    expect(
      routes.routes.map((served) => [served.route.id, served.clusters.map((view) => view.name)]),
    ).toEqual([
      ["httproute:pay/web@evil", ["evil"]],
      ["httproute:pay/web@pay", ["pay"]],
    ]);
    expect(routes.conflicts).toEqual([]);
    expect(answer(clusters, grantsOf(GRANTS), "a.evil.test/")).toBe(EVIL_POD);
  });

  it("keeps the victim's route when the attacker also publishes a route id shaped like its served-apart name", () => {
    const clusters = [
      victim(),
      evil([
        { ...victimRoute, hostnames: ["a.evil.test"], rules: [routeRule([to("evil/web")])] },
        {
          ...victimRoute,
          id: "httproute:pay/web@pay",
          hostnames: ["b.evil.test"],
          rules: [routeRule([to("evil/web")])],
        },
      ]),
    ];
    expect(answer(clusters, grantsOf(GRANTS), "pay.test/")).toBe(VICTIM_POD);
    expect(answer(clusters, grantsOf(GRANTS), "a.evil.test/")).toBe(EVIL_POD);
  });

  it("still settles drift between clusters granted the same hosts: the definition most of them publish wins", () => {
    const grants = grantsOf(
      `${GRANTS}; pay2=hosts:pay.test networks:10.2.0.0/16; pay3=hosts:pay.test networks:10.2.0.0/16`,
    );
    const drifted = { ...victimRoute, rules: [routeRule([to("pay/web")], exactLogin)] };
    const pods = [service("pay2", "pay/web", [endpoint("10.2.0.6", 8080)])];
    const routes = buildSnapshotRoutes(
      snapshotOf([
        victim(),
        { name: "pay2", services: pods, routes: [drifted] },
        { name: "pay3", routes: [drifted] },
      ]),
      grants,
    );
    expect(routes.conflicts).toEqual([
      { id: "httproute:pay/web", served: ["pay2", "pay3"], shadowed: ["pay"] },
    ]);
  });

  it.each(["grpcroute:evil/steal", "ingress:evil/steal", "annotation:evil/web"])(
    "holds a route of every kind to the grants: %s for the victim's host is refused and reported",
    (id) => {
      const steal = routeRecord(id, {
        hostnames: ["pay.test"],
        createdAt: 1,
        rules: [routeRule([to("evil/web")])],
      });
      const clusters = [victim(), evil([steal])];
      expect(answer(clusters, undefined, "pay.test/")).toContain(EVIL_POD);
      expect(answer(clusters, grantsOf(GRANTS), "pay.test/")).toBe(VICTIM_POD);
      expect(buildSnapshotRoutes(snapshotOf(clusters), grantsOf(GRANTS)).refusals).toEqual([
        { cluster: "evil", kind: "route", id, refused: ["pay.test"], count: 1 },
      ]);
    },
  );

  it("reports each refusal: the route and the hosts it was not granted, the endpoints left out, the cluster not listed", () => {
    const clusters = [
      victim(),
      evil(
        [
          routeRecord("httproute:evil/steal", {
            hostnames: ["a.evil.test", "pay.test"],
            rules: [routeRule([to("evil/web")])],
          }),
        ],
        [
          service("evil", "evil/web", [
            endpoint("10.9.0.5", 8080),
            endpoint("10.2.0.5", 8080),
            endpoint("10.2.0.6", 8080),
          ]),
        ],
      ),
      { name: "north", routes: [victimRoute] },
    ];
    expect(buildSnapshotRoutes(snapshotOf(clusters), grantsOf(GRANTS)).refusals).toEqual([
      {
        cluster: "evil",
        kind: "endpoints",
        id: "evil/web",
        refused: ["10.2.0.5:8080", "10.2.0.6:8080"],
        count: 2,
      },
      { cluster: "evil", kind: "route", id: "httproute:evil/steal", refused: ["pay.test"], count: 1 },
      { cluster: "north", kind: "cluster", id: "north", refused: [], count: 1 },
    ]);
    expect(buildSnapshotRoutes(snapshotOf(clusters)).refusals).toEqual([]);
  });
});
