import * as v from "valibot";
import { type IpNetwork, networkContains, parseNetwork } from "../../../lib/cidr.js";
import { ipBytes } from "../../../lib/ip.js";
import type { Result } from "../../../lib/result.js";
import { ClusterNameSchema } from "../../../store/names.js";
import { RouteRecordSchema } from "../../../store/routes.js";

/**
 * CLUSTER_GRANTS: which hosts each cluster may publish routes for, and which networks (its pod CIDRs) its
 * backends may be in. The router's own setting, so no cluster's sync credential can widen it; the sync's
 * HOST_CLAIMS is no defence against that cluster's own credential.
 *
 * @example
 * east=hosts:shop.test,*.east.test networks:10.1.0.0/16,fd00:1::/64; west=hosts:pay.test networks:10.2.0.0/16
 *
 * Host patterns read as HOST_CLAIMS's: a host name (that host only), `*.` and a name (every host and wildcard
 * below that name, at any depth, not the name itself), or `*` (every host, and routes without hostnames).
 * Unset, any cluster may publish anything; set, a cluster it does not list is granted nothing.
 */
export interface ClusterGrant {
  readonly cluster: string;
  /** Lower-case host patterns, as written. */
  readonly hosts: readonly string[];
  readonly networks: readonly IpNetwork[];
}

/** By cluster name. */
export type ClusterGrants = ReadonlyMap<string, ClusterGrant>;

/** Logged once at start-up by the entries while CLUSTER_GRANTS is unset. */
export const NO_GRANTS_WARNING =
  "CLUSTER_GRANTS is not set: any cluster's sync credential may publish routes for any host, and backends at any address";

/** What `hosts:` accepts besides `*`: a route record's host pattern. */
const HostPatternSchema = RouteRecordSchema.entries.hostnames.item;

/** Parses CLUSTER_GRANTS; every problem is listed, so an operator fixes them all at once. */
export function parseClusterGrants(text: string): Result<ClusterGrants> {
  const grants = new Map<string, ClusterGrant>();
  const problems: string[] = [];
  for (const raw of text.split(";")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const parsed = parseGrant(entry);
    if (!parsed.ok) problems.push(parsed.error);
    else if (grants.has(parsed.value.cluster))
      problems.push(`cluster ${parsed.value.cluster} is listed twice`);
    else grants.set(parsed.value.cluster, parsed.value);
  }
  if (problems.length === 0 && grants.size === 0) problems.push("lists no cluster (leave it unset for none)");
  return problems.length > 0 ? { ok: false, error: problems.join("; ") } : { ok: true, value: grants };
}

function parseGrant(entry: string): Result<ClusterGrant> {
  const equals = entry.indexOf("=");
  const cluster = equals < 0 ? "" : entry.slice(0, equals).trim();
  if (equals < 0) return { ok: false, error: `"${entry}" is not cluster=hosts:... networks:...` };
  if (!v.is(ClusterNameSchema, cluster)) {
    return { ok: false, error: `"${cluster}" is not a cluster name (a DNS-1123 label)` };
  }
  const mistake = separatorMistake(cluster, entry.slice(equals + 1));
  if (mistake !== undefined) return { ok: false, error: mistake };
  const fields = new Map<string, string[]>();
  for (const field of entry
    .slice(equals + 1)
    .trim()
    .split(/\s+/)) {
    const colon = field.indexOf(":");
    const name = field.slice(0, Math.max(colon, 0));
    if (name !== "hosts" && name !== "networks") {
      return { ok: false, error: `${cluster}: "${field}" is neither hosts:... nor networks:...` };
    }
    if (fields.has(name)) return { ok: false, error: `${cluster}: ${name}: is given twice` };
    const items = field.slice(colon + 1).split(",");
    if (items.some((item) => item === ""))
      return { ok: false, error: `${cluster}: ${name}: has an empty item` };
    fields.set(name, items);
  }
  const hosts = fields.get("hosts")?.map((host) => host.toLowerCase());
  const networks = fields.get("networks");
  if (!hosts || !networks) {
    return {
      ok: false,
      error: `${cluster}: needs both hosts: and networks: (0.0.0.0/0,::/0 for any address)`,
    };
  }
  const badHost = hosts.find((host) => host !== "*" && !v.is(HostPatternSchema, host));
  if (badHost !== undefined)
    return { ok: false, error: `${cluster}: "${badHost}" is not a host name, *.name or *` };
  const parsed: IpNetwork[] = [];
  for (const network of networks) {
    const result = parseNetwork(network);
    if (!result.ok) return { ok: false, error: `${cluster}: ${result.error}` };
    parsed.push(result.value);
  }
  return { ok: true, value: { cluster, hosts: [...new Set(hosts)], networks: parsed } };
}

/**
 * A separator written as another one, named for what it is rather than for what it breaks further on: a
 * second `cluster=` inside an entry (entries are separated by `;`, not `,` or a space), `hosts:` and
 * `networks:` joined by a comma (fields are separated by a space), or `hosts=` for `hosts:`.
 */
function separatorMistake(cluster: string, fields: string): string | undefined {
  const next = /(?:^|[\s,])([a-z0-9][a-z0-9-]*)=/.exec(fields)?.[1];
  if (next !== undefined && next !== "hosts" && next !== "networks") {
    return `${cluster}: "${next}=" starts another cluster's entry: separate entries with ";"`;
  }
  if (/,\s*(hosts|networks):/.test(fields)) {
    return `${cluster}: separate hosts:... and networks:... with a space, not a comma`;
  }
  const equalsField = /(?:^|\s)(hosts|networks)=/.exec(fields)?.[1];
  if (equalsField !== undefined) return `${cluster}: write ${equalsField}:..., with a colon`;
  return undefined;
}

/**
 * The host patterns of a route its cluster was not granted (`*` standing for a route without hostnames,
 * which serves every host); empty when the cluster may publish it. No grant: nothing is granted.
 */
export function hostsNotGranted(grant: ClusterGrant | undefined, hostnames: readonly string[]): string[] {
  const wanted = hostnames.length === 0 ? ["*"] : hostnames;
  return wanted.filter((host) => !grant?.hosts.some((pattern) => hostPatternCovers(pattern, host)));
}

/**
 * Whether every host `host` names (a host, a `*.` wildcard at any depth, or `*` for every host) is one that
 * `pattern` names: `*.east.test` covers `a.east.test`, `*.a.east.test` and itself, not `east.test` nor `*.test`.
 */
export function hostPatternCovers(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  if (host === "*") return false;
  if (!pattern.startsWith("*.")) return host === pattern;
  const suffix = pattern.slice(1);
  const name = host.startsWith("*.") ? host.slice(1) : host;
  return name === suffix || (name.length > suffix.length && name.endsWith(suffix));
}

/** Whether a backend at `ip` (a canonical literal, as records hold) is in one of the cluster's networks. */
export function mayReach(grant: ClusterGrant | undefined, ip: string): boolean {
  const bytes = ipBytes(ip);
  if (!grant || bytes === undefined) return false;
  return grant.networks.some((network) => networkContains(network, bytes));
}

/**
 * How strongly a cluster may claim `name` (a host; `*` for every host, as a listener without hostname does):
 * undefined when its grant does not cover it. Where several clusters claim one name (certificates), the most
 * specific grant wins (`specificity`: an exact host over the longest `*.` pattern over `*`), then the cluster
 * listed first in CLUSTER_GRANTS (`order`), so the operator, never a cluster's name, decides. Without grants
 * every cluster may claim every name, equally.
 */
export interface ClaimRank {
  readonly specificity: number;
  readonly order: number;
}

const UNGRANTED_CLAIM: ClaimRank = { specificity: 0, order: 0 };
const orders = new WeakMap<ClusterGrants, ReadonlyMap<string, number>>();

export function claimRank(
  grants: ClusterGrants | undefined,
  cluster: string,
  name: string,
): ClaimRank | undefined {
  if (!grants) return UNGRANTED_CLAIM;
  const grant = grants.get(cluster);
  if (!grant) return undefined;
  let specificity = -1;
  for (const pattern of grant.hosts) {
    if (!hostPatternCovers(pattern, name)) continue;
    const score = pattern === "*" ? 0 : pattern.startsWith("*.") ? pattern.length : 1_000 + pattern.length;
    specificity = Math.max(specificity, score);
  }
  if (specificity < 0) return undefined;
  let order = orders.get(grants);
  if (!order) {
    order = new Map([...grants.keys()].map((key, index) => [key, index]));
    orders.set(grants, order);
  }
  return { specificity, order: order.get(cluster) ?? 0 };
}

/** Negative when `a` outranks `b` (claimRank). */
export function compareClaims(a: ClaimRank, b: ClaimRank): number {
  return b.specificity - a.specificity || a.order - b.order;
}
