import { describe, expect, it } from "vitest";
import { clusterFromHeartbeatKey, clusterKeys, heartbeatScanPattern } from "../../store/keys.js";
import { MemoryStore } from "../../store/memory-store.js";
import {
  decodeServiceRecord,
  endpointAddress,
  SCHEMA_VERSION,
  type ServiceRecord,
  serializeServiceRecord,
} from "../../store/records.js";

const record: ServiceRecord = {
  v: SCHEMA_VERSION,
  cluster: "east",
  service: "shop/web",
  hosts: ["shop.example"],
  pathPrefix: "/",
  port: { name: "http", number: 80 },
  ipv4: { endpoints: [{ ip: "10.0.0.1", port: 8080, zone: "a" }], fallback: false, draining: [] },
  ipv6: { endpoints: [], fallback: false, draining: [] },
};

describe("record contract", () => {
  it("puts every key of a cluster under one hash tag", () => {
    const keys = clusterKeys("edgeslice", "east");
    for (const key of Object.values(keys)) expect(key).toMatch(/^edgeslice:\{east\}:/);
  });

  it("recovers the cluster name from a heartbeat key and rejects other keys", () => {
    expect(clusterFromHeartbeatKey("edgeslice", clusterKeys("edgeslice", "east").heartbeat)).toBe("east");
    expect(clusterFromHeartbeatKey("edgeslice", "edgeslice:{east}:services")).toBeUndefined();
    expect(clusterFromHeartbeatKey("other", clusterKeys("edgeslice", "east").heartbeat)).toBeUndefined();
    expect(heartbeatScanPattern("a*b")).toBe("a\\*b:{*}:heartbeat");
  });

  it("round-trips a record through its serialised form", () => {
    const decoded = decodeServiceRecord(serializeServiceRecord(record));
    expect(decoded).toEqual({ ok: true, value: record });
  });

  it("serialises equal records to equal strings whatever their key order", () => {
    const shuffled = JSON.parse(JSON.stringify({ ...record, ipv6: record.ipv6, v: 1 })) as ServiceRecord;
    expect(serializeServiceRecord(shuffled)).toBe(serializeServiceRecord(record));
  });

  it.each([
    ["not JSON", "{", /not JSON/],
    ["another schema version", JSON.stringify({ ...record, v: 2 }), /^v:/],
    [
      "a port out of range",
      JSON.stringify({ ...record, port: { name: "", number: 70000 } }),
      /^port\.number/,
    ],
    ["no hosts", JSON.stringify({ ...record, hosts: [] }), /^hosts/],
    ["a bad service id", JSON.stringify({ ...record, service: "web" }), /^service/],
  ])("rejects a record with %s and says where", (_what, raw, message) => {
    const decoded = decodeServiceRecord(raw);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.error).toMatch(message);
  });

  it("prints IPv6 endpoints in brackets", () => {
    expect(endpointAddress({ ip: "2001:db8::1", port: 80 })).toBe("[2001:db8::1]:80");
    expect(endpointAddress({ ip: "10.0.0.1", port: 80 })).toBe("10.0.0.1:80");
  });
});

describe("memory store", () => {
  it("marks a cluster stale once its lease runs out and fresh again after a heartbeat", async () => {
    let now = 1_000;
    const store = new MemoryStore(() => now);
    const writer = store.writer("east");
    await writer.put(record);
    await writer.heartbeat({ holder: "pod-a", leaseMs: 500, at: now });
    expect(store.current().clusters[0]?.stale).toBe(false);
    now += 501;
    expect(store.current().clusters[0]?.stale).toBe(true);
    await writer.heartbeat({ holder: "pod-a", leaseMs: 500, at: now });
    expect(store.current().clusters[0]?.stale).toBe(false);
  });

  it("keeps the same snapshot object until something changes", async () => {
    const store = new MemoryStore(() => 0);
    const writer = store.writer("east");
    await writer.put(record);
    const first = store.current();
    expect(store.current()).toBe(first);
    await writer.remove("shop/web");
    const second = store.current();
    expect(second).not.toBe(first);
    expect(second.version).toBeGreaterThan(first.version);
    expect(second.clusters[0]?.services.size).toBe(0);
  });

  it("tells subscribers which service changed", async () => {
    const store = new MemoryStore();
    const seen: string[] = [];
    store.subscribe((change) => seen.push(`${change.cluster} ${change.service} ${change.op}`));
    const writer = store.writer("east");
    await writer.put(record);
    await writer.remove("shop/web");
    await writer.remove("shop/web");
    expect(seen).toEqual(["east shop/web put", "east shop/web delete"]);
  });
});
