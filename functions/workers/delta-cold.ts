import type { WarnOnce } from "../../lib/warn-once.js";
import { ANY_HOST, clusterKeys, hostIndexRange, parseHostIndexMember } from "../../store/keys.js";
import { MAX_HOST_PATTERN_LENGTH, type RouteRecord } from "../../store/routes.js";
import type { ClusterHeartbeat, ClusterView } from "../../store/store.js";
import {
  clusterView,
  type DecodedService,
  decodeStoredRoute,
  decodeStoredService,
  NO_RECORDS,
  updatedRecords,
} from "../../store/stored-records.js";
import { type Command, type Reply, readHeartbeat } from "./delta-state.js";

/**
 * The first request of a cold isolate reads only what its host needs, in three round trips whatever the
 * store size: (1) the cluster names (delta-discovery.ts); (2) per cluster the host index members of the
 * host, of each wildcard that may cover it and of the catch-all (store/keys.ts hostIndexMembers), with the
 * lease and the heartbeat record; (3) per cluster HMGET of the routes and services those members name. The views it
 * builds hold those records only; the whole store is read after the response.
 */

/**
 * The host index patterns that may serve `host`: itself, `*.` with each of its parent domains (a `suffix`
 * wildcard covers more than one label; each route's own rule is checked when routing) and the catch-all.
 * None longer than a stored pattern can be: a client's Host of thousands of labels costs no more commands.
 */
export function hostPatterns(host: string): string[] {
  const patterns = host.length <= MAX_HOST_PATTERN_LENGTH ? [host] : [];
  const from = Math.max(0, host.length + 1 - MAX_HOST_PATTERN_LENGTH);
  for (let dot = host.indexOf(".", from); dot >= 0; dot = host.indexOf(".", dot + 1)) {
    patterns.push(`*${host.slice(dot)}`);
  }
  patterns.push(ANY_HOST);
  return patterns;
}

/**
 * Per cluster: one ZRANGEBYLEX per pattern, whether the lease exists, the heartbeat record (its presence
 * registers the cluster; it says where the cluster runs), then whether the host index and the services hash
 * exist (Redis deletes an emptied hash, so EXISTS says whether it holds any record).
 */
export function coldIndexCommands(prefix: string, clusters: readonly string[], host: string): Command[] {
  const patterns = hostPatterns(host);
  return clusters.flatMap((name): Command[] => {
    const keys = clusterKeys(prefix, name);
    return [
      ...patterns.map((pattern): Command => ["zrangebylex", keys.hosts, ...hostIndexRange(pattern)]),
      ["exists", keys.lease],
      ["get", keys.heartbeat],
      ["exists", keys.hosts],
      ["exists", keys.services],
    ];
  });
}

export interface ColdCluster {
  readonly name: string;
  readonly stale: boolean;
  readonly routes: readonly string[];
  readonly services: readonly string[];
  /** Its heartbeat record, when it decodes (the whole read that follows reports one that does not). */
  readonly heartbeat: ClusterHeartbeat | undefined;
}

export interface ColdIndex {
  /** Registered clusters whose host index names something for the host. */
  readonly clusters: readonly ColdCluster[];
  /**
   * Why the host index cannot answer for the host, when it cannot: a cluster holds service records but no host
   * index (a sync from before store format 2, whose routes the index does not list), or a cluster's keys
   * could not be read. The request then waits for the whole store.
   */
  readonly incomplete: string | undefined;
}

export function readColdIndex(
  clusters: readonly string[],
  host: string,
  replies: readonly Reply[],
): ColdIndex {
  const patterns = hostPatterns(host).length;
  const perCluster = patterns + 4;
  const found: ColdCluster[] = [];
  let incomplete: string | undefined;
  clusters.forEach((name, index) => {
    const own = replies.slice(index * perCluster, (index + 1) * perCluster);
    const failed = own.find((reply) => reply[0])?.[0];
    if (failed || own.length < perCluster) {
      incomplete ??= `cluster ${name} unreadable${failed ? `: ${failed.message}` : ""}`;
      return;
    }
    const [lease, heartbeatReply, indexExists, servicesExist] = own.slice(patterns).map(([, value]) => value);
    const { present, heartbeat } = readHeartbeat(name, heartbeatReply, undefined);
    if (!present) return;
    if (indexExists !== 1 && servicesExist === 1) {
      incomplete ??= `cluster ${name} has no host index`;
      return;
    }
    const routes = new Set<string>();
    const services = new Set<string>();
    for (const [, members] of own.slice(0, patterns)) {
      if (!Array.isArray(members)) continue;
      for (const member of members) {
        const parsed = typeof member === "string" ? parseHostIndexMember(member) : undefined;
        if (!parsed) continue;
        routes.add(parsed.route);
        for (const service of parsed.services) services.add(service);
      }
    }
    if (routes.size > 0) {
      found.push({ name, stale: lease !== 1, routes: [...routes], services: [...services], heartbeat });
    }
  });
  return { clusters: found, incomplete };
}

/** Per cluster of the index: HMGET of its routes, then of its services (when it names any). */
export function coldRecordCommands(prefix: string, index: ColdIndex): Command[] {
  return index.clusters.flatMap((cluster): Command[] => {
    const keys = clusterKeys(prefix, cluster.name);
    const routes: Command = ["hmget", keys.routes, ...cluster.routes];
    return cluster.services.length > 0 ? [routes, ["hmget", keys.services, ...cluster.services]] : [routes];
  });
}

/** The views of the host's records (replies of coldRecordCommands), or undefined when Redis refused one. */
export function readColdRecords(
  index: ColdIndex,
  replies: readonly Reply[],
  warnings: WarnOnce,
): ClusterView[] | undefined {
  const views: ClusterView[] = [];
  let at = 0;
  for (const cluster of index.clusters) {
    const routeReply = replies[at++];
    const serviceReply = cluster.services.length > 0 ? replies[at++] : undefined;
    if (!routeReply || routeReply[0] || serviceReply?.[0]) return undefined;
    const routes = new Map<string, RouteRecord | undefined>();
    const routeRaws = Array.isArray(routeReply[1]) ? routeReply[1] : [];
    cluster.routes.forEach((id, position) => {
      const raw: unknown = routeRaws[position];
      routes.set(
        id,
        typeof raw === "string" ? decodeStoredRoute(cluster.name, id, raw, warnings) : undefined,
      );
    });
    const services = new Map<string, DecodedService | undefined>();
    const serviceRaws = Array.isArray(serviceReply?.[1]) ? serviceReply[1] : [];
    cluster.services.forEach((id, position) => {
      const raw: unknown = serviceRaws[position];
      services.set(
        id,
        typeof raw === "string" ? decodeStoredService(cluster.name, id, raw, warnings) : undefined,
      );
    });
    views.push(clusterView(cluster.name, cluster.stale, updatedRecords(NO_RECORDS, services, routes)));
  }
  return views.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
