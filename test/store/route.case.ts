import { describe, expect, it } from "vitest";
import { hostIndexMembers } from "../../store/keys.js";
import { annotationRouteId } from "../../store/legacy.js";
import type { RouteRecord } from "../../store/routes.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "../../store/services.js";
import { type ClusterView, type ClusterWriter, serializeRoute } from "../../store/store.js";
import {
  endpoint,
  routeRecord,
  routeRule,
  serviceRecord,
  serviceRecordV2,
} from "../e2e/support/contract-layout.js";
import { eventually } from "../support/eventually.js";
import type { StoreDriver } from "./store.case.js";

const WAIT_MS = 10_000;
const LEASE_MS = 60_000;

function web(ip: string, service = "shop/web", cluster = "east"): ServiceRecordV2 {
  return serviceRecordV2({
    cluster,
    service,
    ports: [{ name: "http", number: 80, ipv4: [endpoint(ip, 8080)] }],
  });
}

function route(id: string, hostnames: string[], services = ["shop/web"]): RouteRecord {
  return routeRecord(id, {
    hostnames,
    rules: [routeRule(services.map((service) => ({ service, port: 80, weight: 1 })))],
  });
}

/**
 * Schema version 2 writes (store.ts ClusterWriter putService/putRoute ...) as every store implements them:
 * what routers read back, what the sync loads, the fence over them, and the host index kept with each route.
 */
export function describeRouteContract(driver: () => StoreDriver): void {
  describe("version 2 service and route records", () => {
    const viewOf = async (cluster: string): Promise<ClusterView | undefined> =>
      (await driver().source.current())?.clusters.find((view) => view.name === cluster);
    const until = (condition: () => Promise<boolean>, what: string) => eventually(condition, WAIT_MS, what);
    const registered = async (cluster: string, fence?: { holder: string; ttlMs: number }) => {
      const writer = driver().writer(cluster, fence);
      await writer.heartbeat({
        holder: fence?.holder ?? `${cluster}-sync`,
        leaseMs: LEASE_MS,
        at: Date.now(),
      });
      return writer;
    };
    const routeServed = (cluster: string, expected: RouteRecord) =>
      until(
        async () =>
          JSON.stringify((await viewOf(cluster))?.routes.get(expected.id)) === JSON.stringify(expected),
        `route ${expected.id} reached the router`,
      );

    it("delivers a service record and a route record to the router's view, decoded and equal to what was written", async () => {
      const east = await registered("east");
      const record = web("10.0.0.1");
      const shop = route("httproute:shop/web", ["shop.example.test"]);
      await east.putService(record);
      await east.putRoute(shop);
      await routeServed("east", shop);
      const view = await viewOf("east");
      expect(view?.servicesV2.get("shop/web")).toEqual(record);
      expect(view?.routes.get(shop.id)).toEqual(shop);
      expect(view?.services.size).toBe(0);
    });

    it("replaces a route with its second put and takes it out with removeRoute, the service record staying", async () => {
      const east = await registered("east");
      await east.putService(web("10.0.0.1"));
      await east.putRoute(route("httproute:shop/web", ["a.example.test"]));
      const second = route("httproute:shop/web", ["b.example.test"]);
      await east.putRoute(second);
      await routeServed("east", second);
      await east.removeRoute(second.id);
      await until(async () => (await viewOf("east"))?.routes.has(second.id) === false, "the route removal");
      expect((await viewOf("east"))?.servicesV2.get("shop/web")).toEqual(web("10.0.0.1"));
      await east.removeService("shop/web");
      await until(async () => (await viewOf("east"))?.servicesV2.size === 0, "the service removal");
    });

    it("loads both hashes of exactly this cluster, serialised as written", async () => {
      const east = await registered("east");
      const west = await registered("west");
      const kept = route("ingress:shop/web#host:shop.example.test", ["shop.example.test"]);
      await east.putService(web("10.0.0.1"));
      await east.putRoute(kept);
      await east.putRoute(route("annotation:shop/gone", ["gone.example.test"]));
      await east.removeRoute("annotation:shop/gone");
      await west.putService(web("10.1.0.1", "shop/web", "west"));
      await west.putRoute(route("annotation:shop/west", ["west.example.test"]));

      expect(await east.loadAll()).toEqual({
        services: new Map([["shop/web", serializeServiceRecordV2(web("10.0.0.1"))]]),
        routes: new Map([[kept.id, serializeRoute(kept)]]),
      });
      expect(await east.load()).toEqual(new Map([["shop/web", serializeServiceRecordV2(web("10.0.0.1"))]]));
    });

    it("replaces a version 1 record and the route it stood for with the version 2 records of an upgraded sync", async () => {
      const east = await registered("east");
      const v1 = serviceRecord({ cluster: "east", service: "shop/web", ipv4: [endpoint("10.0.0.1", 8080)] });
      await east.put(v1);
      const derived = annotationRouteId("shop/web");
      await until(async () => (await viewOf("east"))?.routes.has(derived) === true, "the version 1 record");

      const annotation = route(derived, ["shop-web.example.test"]);
      await east.putRoute(annotation);
      await east.putService(web("10.0.0.2"));
      await until(
        async () =>
          (await viewOf("east"))?.servicesV2.get("shop/web")?.ports[0]?.ipv4.endpoints[0]?.ip === "10.0.0.2",
        "the version 2 record",
      );
      const view = await viewOf("east");
      expect(view?.services.size).toBe(0);
      expect(view?.routes.get(derived)).toEqual(annotation);
      expect((await east.loadAll()).routes).toEqual(new Map([[derived, serializeRoute(annotation)]]));
    });

    it("refuses a route record that does not validate and a service record of another cluster, storing nothing", async () => {
      const east = await registered("east");
      const invalid = { ...route("httproute:shop/web", ["Not A Host"]) };
      await expect(east.putRoute(invalid)).rejects.toThrow(/httproute:shop\/web/);
      await expect(east.putService(web("10.1.0.1", "shop/web", "west"))).rejects.toThrow(/"west".*"east"/);
      expect(await east.loadAll()).toEqual({ services: new Map(), routes: new Map() });
    });

    it("fences route and service writes like every other write: another replica's are refused, storing nothing", async () => {
      const a = await registered("east", { holder: "sync-a", ttlMs: LEASE_MS });
      const b = driver().writer("east", { holder: "sync-b", ttlMs: LEASE_MS });
      const refused = expect.objectContaining({ name: "FenceRefusedError", holder: "sync-a" });
      await a.putService(web("10.0.0.1"));
      await a.putRoute(route("httproute:shop/web", ["a.example.test"]));
      await expect(b.putService(web("10.0.0.2"))).rejects.toEqual(refused);
      await expect(b.removeService("shop/web")).rejects.toEqual(refused);
      await expect(b.putRoute(route("httproute:shop/web", ["b.example.test"]))).rejects.toEqual(refused);
      await expect(b.removeRoute("httproute:shop/web")).rejects.toEqual(refused);
      expect(await a.loadAll()).toEqual({
        services: new Map([["shop/web", serializeServiceRecordV2(web("10.0.0.1"))]]),
        routes: new Map([
          ["httproute:shop/web", serializeRoute(route("httproute:shop/web", ["a.example.test"]))],
        ]),
      });
    });

    it("keeps the host index to the stored routes: a new record's members in, the replaced one's out, none after removal", async (context) => {
      const read = driver().hostIndex;
      if (!read) return context.skip("the driver cannot read the host index");
      const east: ClusterWriter = await registered("east");
      const first = route(
        "httproute:shop/web",
        ["a.example.test", "*.example.test"],
        ["shop/web", "shop/api"],
      );
      const catchAll = route("ingress:shop/all#any-host", [], []);
      await east.putRoute(first);
      await east.putRoute(catchAll);
      expect(await read("east")).toEqual(sorted([...hostIndexMembers(first), ...hostIndexMembers(catchAll)]));
      expect(await read("east")).toContain("*.example.test\x1fhttproute:shop/web\x1fshop/api,shop/web");
      expect(await read("east")).toContain("*\x1fingress:shop/all#any-host\x1f");

      const second = route("httproute:shop/web", ["b.example.test"], ["shop/api"]);
      await east.putRoute(second);
      expect(await read("east")).toEqual(
        sorted([...hostIndexMembers(second), ...hostIndexMembers(catchAll)]),
      );
      await east.removeRoute(second.id);
      await east.removeRoute(catchAll.id);
      expect(await read("east")).toEqual([]);
    });

    it("adds the cluster to the registry of clusters with its heartbeat and route writes", async (context) => {
      const read = driver().clusterRegistry;
      if (!read) return context.skip("the driver has no registry of clusters");
      const east = driver().writer("east");
      const west = driver().writer("west");
      await east.heartbeat({ holder: "east-sync", leaseMs: LEASE_MS, at: Date.now() });
      await west.putRoute(route("httproute:shop/web", ["a.example.test"]));
      expect(await read()).toEqual(["east", "west"]);
    });
  });
}

function sorted(members: string[]): string[] {
  return [...members].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
