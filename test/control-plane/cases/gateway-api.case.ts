import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RouteRecord } from "../../../store/routes.js";
import { untilAllowed } from "../../support/envtest.js";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import {
  type ControlPlane,
  type ControlPlaneKind,
  describeOn,
  requiringGatewayApi,
} from "../control-plane.js";
import { renderDeploy } from "../support/deploy.js";
import { canaryWeighted, shopRoutes } from "../support/gateway-routes.js";
import { GATEWAYS, gatewayStatus, ROUTES } from "../support/gateway-status.js";
import { namespaceObject, serviceObject, sliceObject } from "../support/objects.js";
import { gatewayClassObject, gatewayObject, referenceGrantObject } from "../support/route-objects.js";
import { published } from "../support/store.js";
import { type SyncCli, startSyncCli, untilLeader, untilReady } from "../support/sync-cli.js";

/** HTTPRoutes through two sync replicas: published records, status conditions written by the leader only. */
export function describeGatewayApiContract(plane: ControlPlaneKind): void {
  describeOn(
    requiringGatewayApi(plane),
    "Gateway API HTTPRoutes with the v1.6.1 CRDs, two sync replicas with deploy/'s RBAC",
    () => {
      let controlPlane: ControlPlane;
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      const prefix = uniquePrefix("plane-gateway");
      const cluster = "east";
      let replicas: SyncCli[] = [];
      let leader: SyncCli;
      let standby: SyncCli;

      const { getObject, ourParent, untilCondition, versions } = gatewayStatus(() => controlPlane);
      const route = async (id: string): Promise<RouteRecord | undefined> =>
        (await published(redis, prefix, cluster)).routes.get(id);
      /** Waits for `count` more full resyncs of `sync` (each recomputes every status). */
      const resyncs = async (sync: SyncCli, count: number) => {
        const metric = "edgeslice_sync_full_resyncs_total";
        const from = (await sync.metric(metric)) ?? 0;
        await pollUntil(async () => ((await sync.metric(metric)) ?? 0) >= from + count, {
          timeoutMs: 10_000,
          describe: () => `${sync.podName} did not resync ${count} times`,
        });
      };

      beforeAll(async () => {
        const deploy = await renderDeploy();
        controlPlane = await plane.start({ serviceAccount: deploy.serviceAccount });
        const services = [
          ["shop", "web-v1", "10.2.0.1"],
          ["shop", "web-v2", "10.2.0.2"],
          ["other", "api", "10.2.0.3"],
        ] as const;
        await Promise.all([
          controlPlane.apply([
            ...deploy.objects,
            ...["infra", "shop", "other"].map(namespaceObject),
            ...services.flatMap(([namespace, name, address]) => [
              serviceObject(namespace, name, undefined),
              sliceObject(namespace, name, [address]),
            ]),
          ]),
          controlPlane.installGatewayApi(),
        ]);
        await untilAllowed(controlPlane, `${GATEWAYS}/httproutes`);
        // Short resyncs: a resync that rewrote an unchanged status would show in the resourceVersions below.
        const env = {
          RESYNC_INTERVAL_MS: "700",
          LEADER_LEASE_MS: "3000",
          LEASE_MS: "6000",
          GATEWAY_ADDRESSES: "edgeslice=127.0.0.1,gateway.shop.test",
        };
        const starting = Promise.all(
          ["a", "b"].map((name) =>
            startSyncCli({ controlPlane, cluster, prefix, podName: `${name}-0`, env }),
          ),
        );
        await controlPlane.apply([
          gatewayClassObject("edgeslice"),
          gatewayClassObject("foreign", "example.com/other-controller"),
          gatewayObject("infra", "gw", "edgeslice", { web: "*.shop.test", api: "api.shop.test" }),
          gatewayObject("infra", "foreign-gw", "foreign", { any: undefined }),
          ...shopRoutes(),
        ]);
        replicas = await starting;
        await Promise.all(replicas.map((replica) => untilReady(replica)));
        await pollUntil(
          async () => (await Promise.all(replicas.map((r) => r.metric("edgeslice_sync_leader")))).includes(1),
          { timeoutMs: 15_000, describe: () => "no replica leads" },
        );
        const gauges = await Promise.all(replicas.map((r) => r.metric("edgeslice_sync_leader")));
        [leader, standby] = (gauges[0] === 1 ? replicas : [...replicas].reverse()) as [SyncCli, SyncCli];
        await untilLeader(standby, 0);
      }, 60_000);
      afterAll(async () => {
        await Promise.all(replicas.map((replica) => replica.kill()));
        await deleteKeysWithPrefix(redis, prefix);
        redis.disconnect();
        await controlPlane?.close();
      });

      it("publishes the canary route: the 90/10 split, Exact/header/method matches, header modifiers, a redirect and a prefix rewrite", async () => {
        await pollUntil(async () => (await route("httproute:shop/canary")) !== undefined, {
          timeoutMs: 15_000,
          describe: () => "httproute:shop/canary was not published",
        });
        const record = (await route("httproute:shop/canary")) as RouteRecord;
        expect(record).toMatchObject({
          source: "httproute",
          hostnames: ["www.shop.test"],
          wildcard: "suffix",
        });
        const byFirstPath = new Map(record.rules.map((rule) => [rule.matches[0]?.path.value, rule]));
        expect(byFirstPath.get("/")?.backends).toEqual([
          { service: "shop/web-v1", port: 80, weight: 90 },
          { service: "shop/web-v2", port: 80, weight: 10 },
        ]);
        expect(byFirstPath.get("/health")).toMatchObject({
          matches: [
            { path: { type: "Exact", value: "/health" }, headers: [], method: "GET" },
            { path: { type: "PathPrefix", value: "/beta" }, headers: [{ name: "x-canary", value: "yes" }] },
          ],
          filters: {
            requestHeaders: { set: [{ name: "x-env", value: "beta" }], add: [], remove: [] },
            responseHeaders: { set: [], add: [], remove: ["server"] },
          },
          backends: [{ service: "shop/web-v2", port: 80, weight: 1 }],
        });
        expect(byFirstPath.get("/old")).toMatchObject({
          filters: { redirect: { scheme: "https", statusCode: 301 } },
          backends: [],
        });
        expect(byFirstPath.get("/api/v1")).toMatchObject({
          filters: { rewrite: { path: { type: "ReplacePrefixMatch", value: "/v1" } } },
          backends: [{ service: "shop/web-v1", port: 80, weight: 1 }],
        });
        // Routes only reference Services: their port-80 records are published with the slices' endpoints.
        const services = (await published(redis, prefix, cluster)).services;
        expect(services.get("shop/web-v2")?.ports[0]?.ipv4.endpoints.map((e) => e.ip)).toEqual(["10.2.0.2"]);
      });

      it("writes Accepted and ResolvedRefs (with observedGeneration) on the HTTPRoute, Accepted and Programmed on the Gateway and its class", async () => {
        await untilCondition("canary", "ResolvedRefs", "ResolvedRefs");
        const { object, entry, conditions } = await ourParent("canary");
        expect(entry?.parentRef).toMatchObject({ name: "gw", namespace: "infra", kind: "Gateway" });
        const generation = object.metadata.generation;
        expect(conditions.get("Accepted")).toMatchObject({
          status: "True",
          reason: "Accepted",
          observedGeneration: generation,
        });
        expect(conditions.get("ResolvedRefs")).toMatchObject({
          status: "True",
          observedGeneration: generation,
        });

        // The syncs start while the routes are being applied: a first status may count fewer attached routes.
        await pollUntil(
          async () => {
            const status = (await getObject(`${GATEWAYS}/namespaces/infra/gateways/gw`)).status;
            return (
              status?.conditions?.some((item) => item.type === "Programmed" && item.status === "True") ===
                true && status.listeners?.find((item) => item.name === "web")?.attachedRoutes === 5
            );
          },
          { timeoutMs: 10_000, describe: () => "Gateway infra/gw never Programmed with 5 routes on web" },
        );
        const gateway = await getObject(`${GATEWAYS}/namespaces/infra/gateways/gw`);
        const gatewayConditions = new Map(gateway.status?.conditions?.map((item) => [item.type, item]));
        expect(gatewayConditions.get("Accepted")).toMatchObject({ status: "True", reason: "Accepted" });
        expect(gatewayConditions.get("Programmed")).toMatchObject({ status: "True", reason: "Programmed" });
        expect(gateway.status?.addresses).toEqual([
          { type: "IPAddress", value: "127.0.0.1" },
          { type: "Hostname", value: "gateway.shop.test" },
        ]);
        // All but elsewhere (no listener's hostname) and theirs attach to `web` (*.shop.test).
        expect(gateway.status?.listeners?.find((item) => item.name === "web")?.attachedRoutes).toBe(5);
        expect(gateway.status?.listeners?.find((item) => item.name === "api")?.attachedRoutes).toBe(0);

        const ours = await getObject(`${GATEWAYS}/gatewayclasses/edgeslice`);
        expect(ours.status?.conditions?.find((item) => item.type === "Accepted")).toMatchObject({
          status: "True",
          reason: "Accepted",
        });
      });

      it("tells the route that lost a host and match to an older one so, in our own condition type", async () => {
        await untilCondition("late", "edgeslice.io/HostOwnership", "ShadowedByOlderRoute");
        expect((await ourParent("late")).conditions.get("Accepted")?.status).toBe("True");
        expect((await ourParent("canary")).conditions.get("edgeslice.io/HostOwnership")).toMatchObject({
          status: "True",
          reason: "Owned",
        });
      });

      it("refuses a hostname no listener allows (NoMatchingListenerHostname), a missing Service (BackendNotFound) and a ConfigMap (InvalidKind)", async () => {
        await untilCondition("elsewhere", "Accepted", "NoMatchingListenerHostname");
        expect((await ourParent("elsewhere")).conditions.get("Accepted")?.status).toBe("False");
        expect(await route("httproute:shop/elsewhere")).toBeUndefined();

        await untilCondition("missing", "ResolvedRefs", "BackendNotFound");
        const missing = await ourParent("missing");
        expect(missing.conditions.get("ResolvedRefs")?.status).toBe("False");
        expect(missing.conditions.get("Accepted")?.status).toBe("True");
        // Published all the same (another cluster may have it); a router finding it nowhere answers 500.
        const backends = (await route("httproute:shop/missing"))?.rules[0]?.backends;
        expect(backends).toEqual([{ service: "shop/nope", port: 80, weight: 1 }]);
        expect((await published(redis, prefix, cluster)).services.has("shop/nope")).toBe(false);
        await untilCondition("wrong-kind", "ResolvedRefs", "InvalidKind");
      });

      it("resolves a cross-namespace backendRef only once a ReferenceGrant allows it", async () => {
        await untilCondition("cross", "ResolvedRefs", "RefNotPermitted");
        expect((await route("httproute:shop/cross"))?.rules[0]?.backends[0]).toMatchObject({
          invalid: expect.stringContaining("RefNotPermitted"),
        });
        await controlPlane.apply(referenceGrantObject("other", "shop-routes", "shop"));
        await untilCondition("cross", "ResolvedRefs", "ResolvedRefs");
        await pollUntil(
          async () =>
            (await route("httproute:shop/cross"))?.rules[0]?.backends[0]?.weight === 1 &&
            "service" in ((await route("httproute:shop/cross"))?.rules[0]?.backends[0] ?? {}),
          { timeoutMs: 10_000, describe: () => "httproute:shop/cross never sent to other/api" },
        );
        expect((await route("httproute:shop/cross"))?.rules[0]?.backends).toEqual([
          { service: "other/api", port: 80, weight: 1 },
        ]);
      });

      it("writes nothing on a route of another controller's class, nor on that class or its Gateway", async () => {
        await untilCondition("canary", "Accepted", "Accepted");
        const theirs = await getObject(`${ROUTES}/theirs`);
        expect(theirs.status?.parents ?? []).toEqual([]);
        expect(await route("httproute:shop/theirs")).toBeUndefined();
        // The CRD's defaults (Accepted/Programmed Unknown, Pending) stay as they were.
        const foreignClass = await getObject(`${GATEWAYS}/gatewayclasses/foreign`);
        expect(foreignClass.status?.conditions?.map((item) => item.reason)).toEqual(["Pending"]);
        const foreignGateway = await getObject(`${GATEWAYS}/namespaces/infra/gateways/foreign-gw`);
        expect(foreignGateway.status?.conditions?.every((item) => item.reason === "Pending")).toBe(true);
      });

      it("writes status from the leader only, and rewrites none of it while nothing changes (resyncs every 0.7 s)", async () => {
        await untilCondition("cross", "ResolvedRefs", "ResolvedRefs");
        // A write the apiserver already shows is counted when its reply reaches the sync: let that settle first.
        await resyncs(leader, 1);
        const before = await versions();
        const writesBefore = await leader.metric("edgeslice_sync_status_writes_total");
        const routeWritesBefore = await leader.metric("edgeslice_sync_route_writes_total");
        await resyncs(leader, 3);
        expect(await versions()).toEqual(before);
        expect(await leader.metric("edgeslice_sync_status_writes_total")).toBe(writesBefore);
        expect(writesBefore).toBeGreaterThan(0);
        expect((await standby.metric("edgeslice_sync_status_writes_total")) ?? 0).toBe(0);
        expect(await leader.metric("edgeslice_sync_route_writes_total")).toBe(routeWritesBefore);
      });

      it("follows a spec change: new weights published and observedGeneration advanced", async () => {
        const { object } = await ourParent("canary");
        const generation = object.metadata.generation ?? 0;
        await controlPlane.apply(canaryWeighted(80, 20));
        await pollUntil(
          async () =>
            (await ourParent("canary")).conditions.get("Accepted")?.observedGeneration === generation + 1,
          { timeoutMs: 10_000, describe: () => "observedGeneration never followed the spec change" },
        );
        const weights = async () =>
          (await route("httproute:shop/canary"))?.rules
            .find((rule) => rule.matches[0]?.path.value === "/")
            ?.backends.map((backend) => backend.weight)
            .join("/");
        await pollUntil(async () => (await weights()) === "80/20", {
          timeoutMs: 10_000,
          describe: () => "the new weights 80/20 were never published",
        });
      });

      it("hands status over with the Lease: the new leader rewrites nothing unchanged and writes what changes", async () => {
        const before = await versions();
        await leader.kill();
        await untilLeader(standby, 1, 20_000);
        await resyncs(standby, 2);
        expect(await versions()).toEqual(before);
        expect((await standby.metric("edgeslice_sync_status_writes_total")) ?? 0).toBe(0);

        await controlPlane.remove("referencegrant", "other", "shop-routes");
        await untilCondition("cross", "ResolvedRefs", "RefNotPermitted");
        // The apiserver shows the write before its reply reaches the sync, which counts it then.
        await pollUntil(async () => ((await standby.metric("edgeslice_sync_status_writes_total")) ?? 0) > 0, {
          timeoutMs: 5_000,
          describe: () => "the new leader's status write was never counted",
        });
      });
    },
  );
}
