import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BackendTlsReader } from "../../store/backend-tls.js";
import type { CertificateReader } from "../../store/certificates.js";
import { type ServiceRecord, serializeServiceRecord } from "../../store/records.js";
import type {
  ClusterView,
  ClusterWriter,
  FenceOptions,
  Snapshot,
  SnapshotSource,
} from "../../store/store.js";
import { endpoint, serviceRecord } from "../e2e/support/contract-layout.js";
import { eventually } from "../support/eventually.js";
import { describeBackendTlsContract } from "./backend-tls.case.js";
import { describeCertificateContract } from "./certificate.case.js";
import { describeFenceContract } from "./fence.case.js";
import { describeRouteContract } from "./route.case.js";

/**
 * One store implementation as the contract suite drives it: the sync side (a writer per cluster) and the
 * router side (a started SnapshotSource) over one fresh, empty store.
 */
export interface StoreDriver {
  /** The writer of `cluster`; fenced (ClusterWriter.fence) when `fence` is given. */
  writer(cluster: string, fence?: FenceOptions): ClusterWriter;
  readonly source: SnapshotSource;
  /** The router's reader of certificate records. */
  readonly certificates?: CertificateReader;
  /** The router's reader of backend TLS records. */
  readonly backendTls?: BackendTlsReader;
  /** The cluster's host index (keys.ts hostIndexMembers) as stored, sorted. */
  readonly hostIndex?: (cluster: string) => Promise<string[]>;
  /** The registry of clusters (keys.ts clustersKey), sorted. */
  readonly clusterRegistry?: () => Promise<string[]>;
  /** Stores any string as a service's record, as a broken or foreign writer could. */
  readonly writeRawRecord?: (cluster: string, service: string, raw: string) => Promise<void>;
  /** What the implementation cannot do: the reason each such case is skipped. */
  readonly cannot?: {
    readonly writeRawRecord?: string;
    readonly hideUnregisteredClusters?: string;
  };
  /** Stops the source and removes what the cases wrote. */
  close(): Promise<void>;
}

const WAIT_MS = 10_000;
const LEASE_MS = 60_000;

function web(cluster: string, ip: string, service = "shop/web"): ServiceRecord {
  return serviceRecord({ cluster, service, ipv4: [endpoint(ip, 8080)] });
}

/**
 * The behaviour every store implementation shares, run against the one `makeDriver` gives (a fresh store per
 * case), in the manner of unstorage's `testDriver`: one function of cases, one small test file per driver.
 */
export function describeStoreContract(driverName: string, makeDriver: () => Promise<StoreDriver>): void {
  describe(`the store contract on ${driverName}`, () => {
    let driver: StoreDriver;
    beforeEach(async () => {
      driver = await makeDriver();
    });
    afterEach(async () => {
      await driver?.close();
    });

    const snapshot = async (): Promise<Snapshot | undefined> => driver.source.current();
    const viewOf = async (cluster: string): Promise<ClusterView | undefined> =>
      (await snapshot())?.clusters.find((view) => view.name === cluster);
    const served = async (cluster: string, service: string): Promise<ServiceRecord | undefined> =>
      (await viewOf(cluster))?.services.get(service);
    const until = (condition: () => Promise<boolean>, what: string) => eventually(condition, WAIT_MS, what);
    const untilServed = (record: ServiceRecord, what: string) =>
      until(async () => sameRecord(await served(record.cluster, record.service), record), what);

    /** A cluster that sent its first heartbeat, as a sync does before anything else. */
    const registered = async (cluster: string): Promise<ClusterWriter> => {
      const writer = driver.writer(cluster);
      await writer.heartbeat({ holder: `${cluster}-sync`, leaseMs: LEASE_MS, at: Date.now() });
      return writer;
    };

    /**
     * Registers a new cluster with one record and waits until the router serves it. A reader finds new
     * clusters by looking at the whole store at once, so whatever the store held before is in its view then.
     */
    const untilRouterLooked = async () => {
      const marker = web("marker", "10.9.9.9");
      await (await registered("marker")).put(marker);
      await untilServed(marker, "the router saw the marker cluster");
    };

    describeFenceContract(() => driver);
    describeRouteContract(() => driver);
    describeCertificateContract(() => driver);
    describeBackendTlsContract(() => driver);

    it("delivers a put record to the router's snapshot, decoded and equal to what was written", async () => {
      const east = await registered("east");
      const before = (await snapshot())?.version ?? 0;
      const record = web("east", "10.0.0.1");
      await east.put(record);
      await untilServed(record, "the record reached the router");
      expect(await served("east", "shop/web")).toEqual(record);
      expect((await snapshot())?.version).toBeGreaterThan(before);
    });

    it("replaces a service's record with its second put", async () => {
      const east = await registered("east");
      await east.put(web("east", "10.0.0.1"));
      await untilServed(web("east", "10.0.0.1"), "the first record");
      await east.put(web("east", "10.0.0.2"));
      await untilServed(web("east", "10.0.0.2"), "the second record");
      expect([...((await viewOf("east"))?.services.keys() ?? [])]).toEqual(["shop/web"]);
      expect(await east.load()).toEqual(
        new Map([["shop/web", serializeServiceRecord(web("east", "10.0.0.2"))]]),
      );
    });

    it("takes a removed service out of the router's snapshot", async () => {
      const east = await registered("east");
      await east.put(web("east", "10.0.0.1"));
      await east.put(web("east", "10.0.0.3", "shop/api"));
      await untilServed(web("east", "10.0.0.3", "shop/api"), "both records");
      await east.remove("shop/web");
      await until(
        async () => (await served("east", "shop/web")) === undefined,
        "the removal reached the router",
      );
      expect(await served("east", "shop/api")).toEqual(web("east", "10.0.0.3", "shop/api"));
    });

    it("loads exactly this cluster's records, serialised", async () => {
      const east = await registered("east");
      const west = await registered("west");
      const kept = [web("east", "10.0.0.1"), web("east", "10.0.0.2", "shop/api")];
      for (const record of kept) await east.put(record);
      await east.put(web("east", "10.0.0.3", "shop/gone"));
      await east.remove("shop/gone");
      await west.put(web("west", "10.1.0.1", "shop/west-only"));

      const loaded = await east.load();
      expect(loaded).toEqual(new Map(kept.map((record) => [record.service, serializeServiceRecord(record)])));
    });

    it("never shows one cluster's records in another's view or load", async () => {
      const east = await registered("east");
      const west = await registered("west");
      await east.put(web("east", "10.0.0.1"));
      await west.put(web("west", "10.1.0.1"));
      await untilServed(web("east", "10.0.0.1"), "east's record");
      await untilServed(web("west", "10.1.0.1"), "west's record");

      await east.remove("shop/web");
      await until(async () => (await served("east", "shop/web")) === undefined, "east's removal");
      expect(await served("west", "shop/web")).toEqual(web("west", "10.1.0.1"));
      expect(await east.load()).toEqual(new Map());
      expect(await west.load()).toEqual(
        new Map([["shop/web", serializeServiceRecord(web("west", "10.1.0.1"))]]),
      );
    });

    it("refuses, in a cluster's writer, a record naming another cluster", async () => {
      const east = await registered("east");
      await expect(east.put(web("west", "10.1.0.1"))).rejects.toThrow(/cluster "west".*"east"/);
      expect(await east.load()).toEqual(new Map());
    });

    it("answers a heartbeat ifRegistered with false on a never-registered cluster, registering nothing", async () => {
      const ghost = driver.writer("ghost");
      const beat = { holder: "ghost-sync", leaseMs: LEASE_MS, at: Date.now(), ifRegistered: true };
      expect(await ghost.heartbeat(beat)).toBe(false);
      expect(await ghost.heartbeat(beat)).toBe(false);
      await untilRouterLooked();
      expect((await viewOf("ghost"))?.stale).not.toBe(false);
      expect(await ghost.load()).toEqual(new Map());

      expect(await ghost.heartbeat({ ...beat, ifRegistered: false })).toBe(true);
      expect(await ghost.heartbeat(beat)).toBe(true);
      await until(async () => (await viewOf("ghost"))?.stale === false, "the registered cluster is fresh");
    });

    it("lists a cluster to the router only once it sent a first heartbeat", async (context) => {
      context.skip(
        driver.cannot?.hideUnregisteredClusters !== undefined,
        driver.cannot?.hideUnregisteredClusters,
      );
      const quiet = driver.writer("quiet");
      await quiet.put(web("quiet", "10.0.0.1"));
      await untilRouterLooked();
      expect(await viewOf("quiet")).toBeUndefined();

      await quiet.heartbeat({ holder: "quiet-sync", leaseMs: LEASE_MS, at: Date.now() });
      await untilServed(web("quiet", "10.0.0.1"), "the cluster after its first heartbeat");
    });

    it("marks a cluster whose lease ran out stale, keeping its records, and fresh after a heartbeat", async () => {
      const east = await registered("east");
      await east.put(web("east", "10.0.0.1"));
      await untilServed(web("east", "10.0.0.1"), "the record");
      expect((await viewOf("east"))?.stale).toBe(false);

      await east.heartbeat({ holder: "east-sync", leaseMs: 1, at: Date.now() });
      await until(async () => (await viewOf("east"))?.stale === true, "the cluster went stale");
      expect(await served("east", "shop/web")).toEqual(web("east", "10.0.0.1"));

      await east.heartbeat({ holder: "east-sync", leaseMs: LEASE_MS, at: Date.now(), ifRegistered: true });
      await until(async () => (await viewOf("east"))?.stale === false, "the cluster is fresh again");
      expect(await served("east", "shop/web")).toEqual(web("east", "10.0.0.1"));
    });

    it("brings back a Service removed and added again", async () => {
      const east = await registered("east");
      await east.put(web("east", "10.0.0.1"));
      await untilServed(web("east", "10.0.0.1"), "the record");
      await east.remove("shop/web");
      await until(async () => (await served("east", "shop/web")) === undefined, "the removal");
      await east.put(web("east", "10.0.0.2"));
      await untilServed(web("east", "10.0.0.2"), "the Service back");
    });

    it("delivers every one of many services written at once", async () => {
      const east = await registered("east");
      const records = Array.from({ length: 60 }, (_, i) => web("east", `10.0.1.${i + 1}`, `shop/s${i}`));
      await Promise.all(records.map((record) => east.put(record)));
      await until(async () => (await viewOf("east"))?.services.size === records.length, "every service");
      for (const record of records) expect(await served("east", record.service)).toEqual(record);
      expect((await east.load()).size).toBe(records.length);
    });

    it("skips a malformed record while the cluster's other records keep serving", async (context) => {
      const write = driver.writeRawRecord;
      if (!write) return context.skip(driver.cannot?.writeRawRecord ?? "the driver cannot write raw records");
      const east = await registered("east");
      await east.put(web("east", "10.0.0.1"));
      await write("east", "shop/broken", '{"v":1,"cluster":"east"}');
      await east.put(web("east", "10.0.0.2", "shop/after"));
      await untilServed(web("east", "10.0.0.2", "shop/after"), "the record after the malformed one");
      expect(await served("east", "shop/broken")).toBeUndefined();
      expect(await served("east", "shop/web")).toEqual(web("east", "10.0.0.1"));
    });
  });
}

/** Equal as the store compares records: by their canonical serialised form. */
function sameRecord(actual: ServiceRecord | undefined, expected: ServiceRecord): boolean {
  return actual !== undefined && serializeServiceRecord(actual) === serializeServiceRecord(expected);
}
