import { describe, expect, it } from "vitest";
import {
  DEFAULT_ROUTE_SETTINGS,
  type DesiredRoutes,
  desiredRoutes,
  HOST_OWNERSHIP_CONDITION,
} from "../../../sync/translate/desired-routes.js";
import { parseHostClaims } from "../../../sync/translate/host-claims.js";
import { type KubeService, parseService } from "../../../sync/translate/kube-objects.js";
import { NO_ROUTE_OBJECTS } from "../../../sync/translate/route-objects.js";
import {
  gateway,
  gatewayClass,
  service as gatewayService,
  httpRoute,
  toService,
} from "./gateway/fixtures.js";

/** A Service exposed by annotations, created at `createdAt`. */
function exposed(namespace: string, name: string, hosts: string, createdAt: string): KubeService {
  const parsed = parseService({
    kind: "Service",
    metadata: { name, namespace, creationTimestamp: createdAt, annotations: { "edgeslice.io/hosts": hosts } },
    spec: { ports: [{ name: "http", port: 80 }] },
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

function withClaims(text: string) {
  const parsed = parseHostClaims(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return { ...DEFAULT_ROUTE_SETTINGS, hostClaims: parsed.value };
}

const payments = exposed("payments", "api", "pay.test", "2024-01-01T00:00:00Z");
/** Created later, and first by name: the attack of hardening #12 item 4. */
const evil = exposed("aaa", "evil", "pay.test,evil.test", "2025-06-01T00:00:00Z");

function hostsOf(desired: DesiredRoutes): Record<string, readonly string[]> {
  return Object.fromEntries([...desired.routes].map(([id, route]) => [id, route.hostnames]));
}

describe("host ownership within a cluster", () => {
  it("gives a host two Services claim to the older one, whatever their names, and reports the loser once", () => {
    const desired = desiredRoutes({ services: [evil, payments], settings: DEFAULT_ROUTE_SETTINGS });
    expect(desired.conflicts).toEqual([
      {
        host: "pay.test",
        match: "PathPrefix /",
        winner: "annotation:payments/api",
        loser: "annotation:aaa/evil",
      },
    ]);
    // Both stay published: the router serves pay.test from the older route by the same rule (createdAt).
    const older = desired.routes.get("annotation:payments/api");
    const newer = desired.routes.get("annotation:aaa/evil");
    expect(older && newer && older.createdAt < newer.createdAt).toBe(true);
  });

  it("lets the lower route id win a tie between routes created in the same second", () => {
    const twin = exposed("zzz", "api", "pay.test", "2024-01-01T00:00:00Z");
    const desired = desiredRoutes({ services: [twin, payments], settings: DEFAULT_ROUTE_SETTINGS });
    expect(desired.conflicts.map((item) => `${item.winner} > ${item.loser}`)).toEqual([
      "annotation:payments/api > annotation:zzz/api",
    ]);
  });

  it("finds no conflict between routes on different hosts or different paths", () => {
    const other = exposed("shop", "web", "shop.test", "2023-01-01T00:00:00Z");
    expect(
      desiredRoutes({ services: [other, payments], settings: DEFAULT_ROUTE_SETTINGS }).conflicts,
    ).toEqual([]);
  });
});

describe("HOST_CLAIMS", () => {
  it("leaves out the hosts a namespace may not claim, keeps its others, and names each refusal", () => {
    const desired = desiredRoutes({
      services: [evil, payments],
      settings: withClaims("payments=pay.test,*.pay.test;aaa=evil.test"),
    });
    expect(hostsOf(desired)).toEqual({
      "annotation:aaa/evil": ["evil.test"],
      "annotation:payments/api": ["pay.test"],
    });
    expect(desired.refusedClaims).toEqual([{ route: "annotation:aaa/evil", host: "pay.test" }]);
    expect(desired.conflicts).toEqual([]);
  });

  it("publishes no route at all for a namespace HOST_CLAIMS does not list, and only its referenced ports", () => {
    const desired = desiredRoutes({ services: [evil, payments], settings: withClaims("payments=pay.test") });
    expect([...desired.routes.keys()]).toEqual(["annotation:payments/api"]);
    expect(desired.refusedClaims).toEqual([
      { route: "annotation:aaa/evil", host: "pay.test" },
      { route: "annotation:aaa/evil", host: "evil.test" },
    ]);
    expect([...desired.ports.keys()]).toEqual(["payments/api"]);
  });

  it("tells an HTTPRoute's owner in its status when HOST_CLAIMS refused a hostname", () => {
    const route = httpRoute("store", {
      hostnames: ["pay.test", "store.test"],
      rules: [toService("infra-backend-v1")],
    });
    const desired = desiredRoutes({
      services: [gatewayService("infra-backend-v1")],
      objects: {
        ...NO_ROUTE_OBJECTS,
        gatewayClasses: [gatewayClass()],
        gateways: [gateway()],
        httpRoutes: [route],
      },
      settings: withClaims("infra=store.test"),
    });
    expect(desired.routes.get("httproute:infra/store")?.hostnames).toEqual(["store.test"]);
    const ownership = desired.statuses.httpRoutes
      .get("infra/store")?.[0]
      ?.conditions.find((item) => item.type === HOST_OWNERSHIP_CONDITION);
    expect(ownership).toMatchObject({ status: "False", reason: "NotAllowedByHostClaims" });
    expect(ownership?.message).toContain("pay.test");
  });

  it("tells an HTTPRoute shadowed by an older route of the same host and match that it lost, and to whom", () => {
    const older = httpRoute(
      "first",
      { hostnames: ["pay.test"], rules: [toService("infra-backend-v1")] },
      {
        createdAt: "2023-01-01T00:00:00Z",
      },
    );
    const newer = httpRoute("second", { hostnames: ["pay.test"], rules: [toService("infra-backend-v2")] });
    const desired = desiredRoutes({
      services: [gatewayService("infra-backend-v1"), gatewayService("infra-backend-v2")],
      objects: {
        ...NO_ROUTE_OBJECTS,
        gatewayClasses: [gatewayClass()],
        gateways: [gateway()],
        httpRoutes: [newer, older],
      },
      settings: DEFAULT_ROUTE_SETTINGS,
    });
    const conditionOf = (key: string) =>
      desired.statuses.httpRoutes
        .get(key)?.[0]
        ?.conditions.find((item) => item.type === HOST_OWNERSHIP_CONDITION);
    expect(conditionOf("infra/first")).toMatchObject({ status: "True", reason: "Owned" });
    expect(conditionOf("infra/second")).toMatchObject({ status: "False", reason: "ShadowedByOlderRoute" });
    expect(conditionOf("infra/second")?.message).toContain("httproute:infra/first");
  });
});
