import { describe, expect, it } from "vitest";
import { createRouting } from "../../../functions/core/routing.js";
import { silentLogger } from "../../../lib/logger.js";
import type { Snapshot } from "../../../store/store.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { snapshotOf } from "../fixtures.js";
import { testConfig } from "../harness.js";

/**
 * A Service port with a BackendTLSPolicy (protocol https in its record) is never sent to in cleartext: a
 * router that opens no TLS to backends (RoutingDeps.backendTls unset, as Workers) refuses it, one that does
 * gets the backends with their policy.
 */
const secure = (cluster: string, ip: string, policy?: string) =>
  serviceRecordV2({
    cluster,
    service: "shop/api",
    ports: [{ number: 443, ipv4: [endpoint(ip, 8443)], ...(policy ? { tlsPolicy: policy } : {}) }],
  });
const route = routeRecord("httproute:shop/api", {
  hostnames: ["api.shop.test"],
  rules: [
    routeRule([{ service: "shop/api", port: 443, weight: 1 }], {
      filters: { mirrors: [{ service: "shop/api", port: 443, percent: 100 }] },
    }),
  ],
});

async function routed(snapshot: Snapshot, backendTls: boolean) {
  const routing = createRouting({
    source: { current: () => snapshot },
    config: testConfig,
    now: Date.now,
    random: () => 0.5,
    balancing: "p2c",
    logger: silentLogger,
    backendTls,
  });
  return routing.route("http://api.shop.test/", { method: "GET", headers: new Headers() });
}

describe("backends whose port asks for TLS", () => {
  it("are refused with backend_tls_unsupported where the router opens no TLS to backends", async () => {
    const snapshot = snapshotOf([
      { name: "east", services: [secure("east", "10.0.0.1", "shop/api-tls")], routes: [route] },
    ]);
    expect(await routed(snapshot, false)).toBe("backend_tls_unsupported");
  });

  it("leave only the clusters whose port needs no TLS where the router opens none, never copied in cleartext", async () => {
    const snapshot = snapshotOf([
      { name: "east", services: [secure("east", "10.0.0.1", "shop/api-tls")], routes: [route] },
      { name: "west", services: [secure("west", "10.1.0.1")], routes: [structuredClone(route)] },
    ]);
    const result = await routed(snapshot, false);
    expect(typeof result === "object" && "selection" in result && result.selection.addresses).toEqual([
      "10.1.0.1:8443",
    ]);
    expect(typeof result === "object" && "mirrors" in result && result.mirrors.map((m) => m.ip)).toEqual([
      "10.1.0.1",
    ]);
  });

  it("carry their policy to a router that opens TLS to backends", async () => {
    const snapshot = snapshotOf([
      { name: "east", services: [secure("east", "10.0.0.1", "shop/api-tls")], routes: [route] },
    ]);
    const result = await routed(snapshot, true);
    const backend =
      typeof result === "object" && "selection" in result
        ? result.selection.tiers[0]?.backends[0]
        : undefined;
    expect(backend).toMatchObject({
      address: "10.0.0.1:8443",
      protocol: "https",
      tls: { policy: "shop/api-tls" },
    });
  });

  it("copy a mirror to such a port over TLS, with its cluster and policy, where the router opens TLS", async () => {
    const snapshot = snapshotOf([
      { name: "east", services: [secure("east", "10.0.0.1", "shop/api-tls")], routes: [route] },
    ]);
    const result = await routed(snapshot, true);
    expect(typeof result === "object" && "mirrors" in result && result.mirrors).toEqual([
      {
        service: "shop/api",
        ip: "10.0.0.1",
        port: 8443,
        cluster: "east",
        protocol: "https",
        tls: { policy: "shop/api-tls" },
      },
    ]);
  });

  it("are refused to a GRPCRoute even where the router opens TLS, never spoken to in cleartext h2c", async () => {
    const grpc = { ...route, id: "grpcroute:shop/api", source: "grpcroute" as const };
    const snapshot = snapshotOf([
      { name: "east", services: [secure("east", "10.0.0.1", "shop/api-tls")], routes: [grpc] },
    ]);
    expect(await routed(snapshot, true)).toBe("backend_tls_unsupported");
  });
});
