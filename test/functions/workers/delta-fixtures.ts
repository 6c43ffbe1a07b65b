import type { Reply, StoreState } from "../../../functions/workers/delta-state.js";
import type { Logger } from "../../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../../lib/warn-once.js";
import type { ClusterState } from "../../../store/cluster-state.js";
import { annotationRoute } from "../../../store/legacy.js";
import { SCHEMA_VERSION, type ServiceRecord } from "../../../store/records.js";
import type { RouteRecord } from "../../../store/routes.js";
import {
  type ServiceRecordV2,
  serializeServiceRecordV2,
  serviceRecordFromV1,
} from "../../../store/services.js";
import { serializeRoute } from "../../../store/store.js";
import { clusterView, decodeClusterRecords } from "../../../store/stored-records.js";
import { recordingLogger } from "../../support/loggers.js";

/** Records of store format 2 as the sync writes them, and the replies Redis gives for them. */
export const PREFIX = "t";

export function serviceV2(
  cluster: string,
  service: string,
  ip: string,
  hosts = [`${service.split("/")[1]}.test`],
) {
  const v1: ServiceRecord = {
    v: SCHEMA_VERSION,
    cluster,
    service,
    hosts,
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: [{ ip, port: 8080 }], fallback: false, draining: [] },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  };
  return { record: serviceRecordFromV1(v1), route: annotationRoute(v1) };
}

export const rawService = (record: ServiceRecordV2): string => serializeServiceRecordV2(record);
export const rawRoute = (route: RouteRecord): string => serializeRoute(route);

/** A registered cluster read whole with these records, its stream at `lastChangeId`. */
export function clusterState(
  name: string,
  records: readonly { record: ServiceRecordV2; route: RouteRecord }[],
  lastChangeId: string,
  options: { stale?: boolean; registered?: boolean } = {},
): ClusterState {
  const decoded = decodeClusterRecords(
    name,
    records.map(({ record }) => [record.service, rawService(record)] as const),
    records.map(({ route }) => [route.id, rawRoute(route)] as const),
  );
  return {
    records: decoded,
    view: clusterView(name, options.stale ?? false, decoded),
    lastChangeId,
    registered: options.registered ?? true,
  };
}

export function storeState(clusters: Record<string, ClusterState>, absent: string[] = []): StoreState {
  return { clusters: new Map(Object.entries(clusters)), absent: new Set(absent), scanCursor: "0" };
}

export const ok = (value: unknown): Reply => [null, value];
export const replyError = (message: string): Reply => {
  const error = new Error(message);
  error.name = "ReplyError";
  return [error, null];
};
/** SMEMBERS of the registry and a finished SCAN step that found nothing more. */
export const discovery = (names: string[]): Reply[] => [ok(names), ok(["0", []])];
export const entry = (id: string, kind: "service" | "route", key: string, op = "put"): [string, string[]] => [
  id,
  ["kind", kind, "id", key, "op", op, "v", "2"],
];

export function warningsWithLog(): {
  warnings: WarnOnce;
  entries: ReturnType<typeof recordingLogger>["entries"];
  logger: Logger;
} {
  const { logger, entries } = recordingLogger();
  return { warnings: createWarnOnce(logger), entries, logger };
}

/** A heartbeat record as a sync writes it, placed in Frankfurt. */
export const HEARTBEAT = JSON.stringify({
  v: 1,
  cluster: "east",
  holder: "sync-0",
  at: 1_000,
  leaseMs: 15_000,
  region: "eu-central",
  location: { lat: 50.11, long: 8.68 },
});

/** The GET of a heartbeat record: 1 for a record there, 0 for none. */
export const beat = (present = 1): Reply => ok(present === 1 ? HEARTBEAT : null);

/** Replies of one cluster's XRANGE, lease and heartbeat record (1: there, 0: gone). */
export const clusterReplies = (entries: unknown, lease = 1, heartbeat = 1): Reply[] => [
  ok(entries),
  ok(lease),
  beat(heartbeat),
];

/**
 * The store most refresh tests start from: east holds shop/web and shop/api, last entry 5-0 (OWN_EAST, which
 * an XRANGE from it returns first); west holds shop/web, last entry 7-0.
 */
export const WEB = serviceV2("east", "shop/web", "10.0.0.1");
export const API = serviceV2("east", "shop/api", "10.0.0.2");
export const EAST = clusterState("east", [WEB, API], "5-0");
export const WEST = clusterState("west", [serviceV2("west", "shop/web", "10.1.0.1")], "7-0");
export const OWN_EAST = entry("5-0", "service", "shop/web");
