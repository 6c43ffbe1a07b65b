import { describe, expect, it } from "vitest";
import { parseSyncConfig } from "../../sync/config.js";

const identity = () => "host-1";

describe("parseSyncConfig", () => {
  it("applies the documented defaults when only CLUSTER_NAME is set", () => {
    const config = parseSyncConfig({ CLUSTER_NAME: "east" }, identity);
    expect(config).toMatchObject({
      redis: { kind: "standalone", url: "redis://127.0.0.1:6379" },
      cluster: "east",
      prefix: "edgeslice",
      namespaces: [],
      port: 9464,
      leaseMs: 15_000,
      heartbeatMs: 3_000,
      leaderLeaseMs: 8_000,
      fenceMs: 8_000,
      watchTimeoutSeconds: 300,
      watchStallGraceMs: 30_000,
      debounceMs: 50,
      valve: { maxLossFraction: 0.5, minLoss: 2, holdMs: 30_000 },
      leaderElection: true,
      leaseName: "edgeslice-sync-east",
      identity: "host-1",
      logLevel: "info",
    });
  });

  it.each([
    { env: { WATCH_NAMESPACES: " shop, ,web " }, field: "namespaces", value: ["shop", "web"] },
    { env: { LEADER_ELECTION: "off" }, field: "leaderElection", value: false },
    { env: { LEADER_ELECTION: "" }, field: "leaderElection", value: true },
    { env: { POD_NAME: "sync-7f9", HOSTNAME: "other" }, field: "identity", value: "sync-7f9" },
    { env: { HOSTNAME: "node-host" }, field: "identity", value: "node-host" },
    { env: { POD_NAMESPACE: "edge" }, field: "leaseNamespace", value: "edge" },
    { env: { LEASE_NAMESPACE: "ops", POD_NAMESPACE: "edge" }, field: "leaseNamespace", value: "ops" },
    { env: { LEASE_MS: "9000", LEADER_ELECTION: "false" }, field: "heartbeatMs", value: 1800 },
    {
      env: { LEASE_MS: "9000", HEARTBEAT_MS: "1000", LEADER_ELECTION: "0" },
      field: "heartbeatMs",
      value: 1000,
    },
    { env: { LEASE_MS: "60000", LEADER_ELECTION: "false" }, field: "fenceMs", value: 36_000 },
    {
      env: { WATCH_TIMEOUT_SECONDS: "5", WATCH_STALL_GRACE_MS: "2000" },
      field: "watchTimeoutSeconds",
      value: 5,
    },
    { env: { EDGESLICE_PREFIX: "team:edge" }, field: "prefix", value: "team:edge" },
    { env: { SYNC_PORT: "" }, field: "port", value: 9464 },
    {
      env: { REDIS_URL: "redis://a:6379,redis://b:7000", REDIS_CLUSTER: "true" },
      field: "redis",
      value: {
        kind: "cluster",
        nodes: [
          { host: "a", port: 6379 },
          { host: "b", port: 7000 },
        ],
        username: undefined,
        password: undefined,
        tls: false,
      },
    },
  ])("reads $field from $env", ({ env, field, value }) => {
    const config = parseSyncConfig({ CLUSTER_NAME: "east", ...env }, identity);
    expect(config[field as keyof typeof config]).toEqual(value);
  });

  it("lists every bad variable in one error", () => {
    const attempt = () =>
      parseSyncConfig(
        {
          CLUSTER_NAME: "East_1",
          SYNC_PORT: "http",
          VALVE_MAX_LOSS_FRACTION: "2",
          LEADER_ELECTION: "maybe",
          WATCH_NAMESPACES: "ok,Not_OK",
          EDGESLICE_PREFIX: "a{b}",
        },
        identity,
      );
    expect(attempt).toThrow(/CLUSTER_NAME/);
    for (const name of [
      "SYNC_PORT",
      "VALVE_MAX_LOSS_FRACTION",
      "LEADER_ELECTION",
      "WATCH_NAMESPACES",
      "EDGESLICE_PREFIX",
    ]) {
      expect(attempt).toThrow(new RegExp(name));
    }
  });

  it("refuses lease settings under which a takeover after a leader crash would leave the cluster stale", () => {
    // The earlier defaults: the standby took up to 19 s to lead while the store lease ran out 10-15 s after the crash.
    const old = () => parseSyncConfig({ CLUSTER_NAME: "east", LEASE_MS: "15000", LEADER_LEASE_MS: "15000" });
    expect(old).toThrow(/LEASE_MS \(15000\) minus HEARTBEAT_MS \(3000\) must exceed the longest takeover/);
    expect(old).toThrow(/19000 ms/);
    expect(() => parseSyncConfig({ CLUSTER_NAME: "east", LEASE_MS: "13000", HEARTBEAT_MS: "2600" })).toThrow(
      /10600 ms/,
    );
    expect(parseSyncConfig({ CLUSTER_NAME: "east", LEASE_MS: "13000", HEARTBEAT_MS: "2000" })).toMatchObject({
      leaseMs: 13_000,
      heartbeatMs: 2_000,
    });
    // A single replica takes nothing over.
    expect(
      parseSyncConfig({ CLUSTER_NAME: "east", LEASE_MS: "3000", LEADER_ELECTION: "false" }).leaseMs,
    ).toBe(3000);
  });

  it("refuses a heartbeat slower than half the writer fence's TTL (LEADER_LEASE_MS)", () => {
    expect(() =>
      parseSyncConfig({
        CLUSTER_NAME: "east",
        LEASE_MS: "60000",
        LEADER_LEASE_MS: "8000",
        HEARTBEAT_MS: "5000",
      }),
    ).toThrow(/HEARTBEAT_MS \(5000\) must be at most half of LEADER_LEASE_MS \(8000\)/);
  });

  it("requires CLUSTER_NAME", () => {
    expect(() => parseSyncConfig({}, identity)).toThrow(/CLUSTER_NAME is required/);
  });
});
