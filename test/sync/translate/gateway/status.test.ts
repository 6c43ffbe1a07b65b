import { describe, expect, it } from "vitest";
import {
  type Condition,
  mergeConditions,
  mergeRouteParents,
  type RouteParentStatus,
} from "../../../../sync/translate/gateway/conditions.js";
import { gateway, httpRoute, listener, toService, translate } from "./fixtures.js";

const T0 = "2024-01-01T00:00:00.000Z";
const T1 = "2024-02-01T00:00:00.000Z";
const accepted = (status: "True" | "False", lastTransitionTime?: string): Condition => ({
  type: "Accepted",
  status,
  reason: status === "True" ? "Accepted" : "NotAllowedByListeners",
  message: "m",
  observedGeneration: 3,
  ...(lastTransitionTime ? { lastTransitionTime } : {}),
});

describe("conditions as computed", () => {
  const routes = [
    httpRoute("b", { hostnames: ["b.example.com"], rules: [toService("infra-backend-v1")] }),
    httpRoute("a", { hostnames: ["a.example.com"], rules: [toService("infra-backend-v2")] }),
    httpRoute("c", { rules: [toService("missing")] }, { namespace: "other" }),
  ];
  const gateways = [
    gateway({ listeners: [listener("http"), listener("tcp", { protocol: "TCP", port: 9 })] }),
  ];

  it("is the same whatever the input order, with maps filled in key order", () => {
    const forward = translate({ gateways, httpRoutes: routes });
    const backward = translate({ gateways, httpRoutes: [...routes].reverse() });
    expect(backward).toEqual(forward);
    expect(forward.routes.map((route) => route.id)).toEqual(["httproute:infra/a", "httproute:infra/b"]);
    expect([...forward.statuses.httpRoutes.keys()]).toEqual(["infra/a", "infra/b", "other/c"]);
  });

  it("leaves lastTransitionTime to the writer unless given now, and carries observedGeneration", () => {
    const plain = translate({ gateways, httpRoutes: routes });
    const conditions = plain.statuses.httpRoutes.get("infra/a")?.[0]?.conditions ?? [];
    expect(
      conditions.every((item) => item.lastTransitionTime === undefined && item.observedGeneration === 3),
    ).toBe(true);
    const stampedRun = translate({ gateways, httpRoutes: routes, now: Date.parse(T1) });
    const all = [
      ...(stampedRun.statuses.httpRoutes.get("infra/a")?.[0]?.conditions ?? []),
      ...(stampedRun.statuses.gateways.get("infra/gw")?.conditions ?? []),
      ...(stampedRun.statuses.gateways.get("infra/gw")?.listeners[0]?.conditions ?? []),
      ...(stampedRun.statuses.gatewayClasses.get("edgeslice")?.conditions ?? []),
    ];
    expect(all.length).toBeGreaterThan(5);
    expect(all.every((item) => item.lastTransitionTime === T1)).toBe(true);
  });

  it("uses creationTimestamp for the route's age, in ms", () => {
    const result = translate({ httpRoutes: [httpRoute("web", {}, { createdAt: "2024-03-04T05:06:07Z" })] });
    expect(result.routes[0]?.createdAt).toBe(Date.parse("2024-03-04T05:06:07Z"));
  });
});

describe("mergeConditions (what the status writer writes)", () => {
  it("keeps lastTransitionTime while the status is unchanged, even when reason or message change", () => {
    const merged = mergeConditions([accepted("True", T0)], [{ ...accepted("True"), message: "new" }], T1);
    expect(merged).toEqual([{ ...accepted("True", T0), message: "new" }]);
  });

  it("stamps now when the status changes, and for a condition type seen for the first time", () => {
    const resolved: Condition = {
      type: "ResolvedRefs",
      status: "True",
      reason: "ResolvedRefs",
      message: "m",
    };
    expect(mergeConditions([accepted("True", T0)], [accepted("False"), resolved], T1)).toEqual([
      accepted("False", T1),
      { ...resolved, lastTransitionTime: T1 },
    ]);
  });

  it("keeps conditions of types it does not set, in place", () => {
    const foreign: Condition = {
      type: "example.com/Audited",
      status: "True",
      reason: "Yes",
      message: "",
      lastTransitionTime: T0,
    };
    expect(mergeConditions([foreign, accepted("True", T0)], [accepted("True")], T1)).toEqual([
      foreign,
      accepted("True", T0),
    ]);
  });
});

describe("mergeRouteParents", () => {
  const parentRef = { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" };
  const ours = (conditions: Condition[], name = "gw"): RouteParentStatus => ({
    parentRef: { ...parentRef, name },
    controllerName: "edgeslice.io/gateway-controller",
    conditions,
  });
  const theirs: RouteParentStatus = {
    parentRef: { ...parentRef, name: "other" },
    controllerName: "example.net/gateway",
    conditions: [accepted("True", T0)],
  };

  it("keeps other controllers' entries, replaces ours and removes parents we no longer serve", () => {
    const existing = [ours([accepted("True", T0)], "old"), theirs, ours([accepted("True", T0)])];
    const merged = mergeRouteParents(
      existing,
      [ours([accepted("True")])],
      "edgeslice.io/gateway-controller",
      T1,
    );
    expect(merged).toEqual([theirs, ours([accepted("True", T0)])]);
  });

  it("clears our entries when the route has no parent of ours any more", () => {
    const merged = mergeRouteParents(
      [ours([accepted("True", T0)]), theirs],
      [],
      "edgeslice.io/gateway-controller",
      T1,
    );
    expect(merged).toEqual([theirs]);
  });
});
