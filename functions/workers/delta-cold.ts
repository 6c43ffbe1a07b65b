import type { WarnOnce } from "../../lib/warn-once.js";
import { ANY_HOST, clusterKeys, hostIndexRange, parseHostIndexMember } from "../../store/keys.js";
import { MAX_HOST_PATTERN_LENGTH } from "../../store/routes.js";
import type { ClusterHeartbeat, ClusterView } from "../../store/store.js";
import { clusterView, NO_RECORDS } from "../../store/stored-records.js";
import { type Command, type Reply, readHeartbeat, withNamedRecords } from "./delta-state.js";

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
  // Per cluster: a ZRANGEBYLEX per pattern, then lease, heartbeat, host index and services (coldIndexCommands).
  const perCluster = patterns + 4;
  const found: ColdCluster[] = [];
  let incomplete: string | undefined;
  clusters.forEach((name, index) => {
    const own = replies.slice(index * perCluster, (index + 1) * perCluster);
    const read = coldCluster(name, own, patterns);
    if (read === undefined) return;
    if ("incomplete" in read) incomplete ??= read.incomplete;
    else found.push(read);
  });
  return { clusters: found, incomplete };
}

/**
 * One cluster's replies of coldIndexCommands: what its host index names for the host; undefined when it is not
 * registered or names nothing; why the index cannot answer, when it cannot.
 */
function coldCluster(
  name: string,
  own: readonly Reply[],
  patterns: number,
): ColdCluster | { readonly incomplete: string } | undefined {
  const failed = own.find((reply) => reply[0])?.[0];
  if (failed || own.length < patterns + 4)
    return { incomplete: `cluster ${name} unreadable${failed ? `: ${failed.message}` : ""}` };
  const [lease, heartbeatReply, indexExists, servicesExist] = own.slice(patterns).map(([, value]) => value);
  const { present, heartbeat } = readHeartbeat(name, heartbeatReply, undefined);
  if (!present) return undefined;
  if (indexExists !== 1 && servicesExist === 1) return { incomplete: `cluster ${name} has no host index` };
  const { routes, services } = indexedIds(own.slice(0, patterns));
  if (routes.length === 0) return undefined;
  return { name, stale: lease !== 1, routes, services, heartbeat };
}

/** The route and service ids the host index members in these ZRANGEBYLEX replies name, each once. */
function indexedIds(replies: readonly Reply[]): { routes: string[]; services: string[] } {
  const routes = new Set<string>();
  const services = new Set<string>();
  for (const [, members] of replies) {
    if (!Array.isArray(members)) continue;
    for (const member of members) {
      const parsed = typeof member === "string" ? parseHostIndexMember(member) : undefined;
      if (!parsed) continue;
      routes.add(parsed.route);
      for (const service of parsed.services) services.add(service);
    }
  }
  return { routes: [...routes], services: [...services] };
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
    const values = { services: serviceReply?.[1], routes: routeReply[1] };
    const records = withNamedRecords(cluster.name, NO_RECORDS, cluster, values, warnings);
    views.push(clusterView(cluster.name, cluster.stale, records));
  }
  return views.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
