import { byCodeUnits } from "../../../lib/code-unit-order.js";
import { type ClusterGrants, claimRank, compareClaims } from "../../core/trust/cluster-grants.js";

/**
 * Which certificate a TLS handshake gets. Pure: the table is built once per change of the certificate records
 * (certificate-source.ts) and read per handshake and per TLS request (the 421 rule, core/tls/misdirected.ts).
 */

/** One usable certificate: where it came from, its version, and the names it is chosen for. */
export interface TableCertificate {
  readonly cluster: string;
  /** The Secret's `namespace/name`. */
  readonly id: string;
  /** sha256 of the chain: TLS contexts are cached per (cluster, id, version). */
  readonly version: string;
  /** Lower-case names, `*.` wildcards among them. */
  readonly hostnames: readonly string[];
  /** Used by a listener without a hostname: the default for other SNIs, covering every Host. */
  readonly anyHost?: boolean | undefined;
}

export interface CertificateTable {
  /** Exact names, then wildcard suffixes (`*.example.com` → `example.com`), each to its candidates, best first. */
  readonly exact: ReadonlyMap<string, readonly TableCertificate[]>;
  readonly wildcard: ReadonlyMap<string, readonly TableCertificate[]>;
  /** The certificates of listeners without a hostname, best first: for an SNI no name matches, or none. */
  readonly fallback: readonly TableCertificate[];
  readonly size: number;
  /** CLUSTER_GRANTS: a certificate serves only names its cluster was granted; undefined, every name. */
  readonly grants: ClusterGrants | undefined;
}

export const EMPTY_CERTIFICATE_TABLE: CertificateTable = {
  exact: new Map(),
  wildcard: new Map(),
  fallback: [],
  size: 0,
  grants: undefined,
};

export interface CertificateTableOptions {
  readonly grants?: ClusterGrants | undefined;
  /** ROUTER_CLUSTER: without grants, its certificates come first. */
  readonly ownCluster?: string | undefined;
}

/**
 * The table of `certificates`. A certificate is a claim on the names it lists exactly like a route: under
 * CLUSTER_GRANTS it is served only for names its cluster is granted (a cluster the grants do not list serves
 * none, and only a cluster granted `*` may serve a client without SNI), checked per name as it is asked for.
 * When several granted clusters claim one name, the most specific grant wins, then the cluster listed first
 * in CLUSTER_GRANTS (cluster-grants.ts claimRank), then the Secret's id; never a cluster's name. Without grants
 * (no trust boundary at all) the router's own cluster comes first, then clusters and ids by name. Every router
 * picks the same certificate whatever order the records were read in.
 */
export function certificateTable(
  certificates: readonly TableCertificate[],
  options: CertificateTableOptions = {},
): CertificateTable {
  const { grants, ownCluster } = options;
  const ordered = grants
    ? [...certificates].sort((a, b) => byCodeUnits(a.id, b.id))
    : [...certificates].sort(
        (a, b) =>
          Number(b.cluster === ownCluster) - Number(a.cluster === ownCluster) ||
          byCodeUnits(a.cluster, b.cluster) ||
          byCodeUnits(a.id, b.id),
      );
  const exact = new Map<string, TableCertificate[]>();
  const wildcard = new Map<string, TableCertificate[]>();
  for (const certificate of ordered) {
    for (const name of new Set(certificate.hostnames)) {
      const into = name.startsWith("*.") ? wildcard : exact;
      const key = name.startsWith("*.") ? name.slice(2) : name;
      const list = into.get(key);
      if (list) list.push(certificate);
      else into.set(key, [certificate]);
    }
  }
  const fallback = ordered.filter((certificate) => certificate.anyHost === true);
  return { exact, wildcard, fallback, size: certificates.length, grants };
}

/**
 * The certificate for an SNI server name: an exact name over a wildcard, and the longest wildcard over a
 * shorter one, as listener hostnames rank (Gateway API Listener.hostname: `*.example.com` covers one or more
 * labels, never `example.com`; the conformance test HTTPSListenerMultiTLSCertsLongestMatchingSNI), then the
 * certificate of a listener without a hostname (it accepts every host). Undefined when none fits. A client
 * that sent no SNI gets the certificate of a listener without hostname (README: it is then routed by its
 * Host), under CLUSTER_GRANTS only one of a cluster granted every host.
 */
export function selectCertificate(
  table: CertificateTable,
  servername: string | undefined,
): TableCertificate | undefined {
  if (!servername) return best(table, table.fallback, "*");
  const name = normalise(servername);
  const exact = best(table, table.exact.get(name), name);
  if (exact) return exact;
  for (let dot = name.indexOf("."); dot > 0; dot = name.indexOf(".", dot + 1)) {
    const wildcard = best(table, table.wildcard.get(name.slice(dot + 1)), name);
    if (wildcard) return wildcard;
  }
  return best(table, table.fallback, name);
}

/** The candidate whose cluster may serve `name` with the strongest claim; the first one without grants. */
function best(
  table: CertificateTable,
  candidates: readonly TableCertificate[] | undefined,
  name: string,
): TableCertificate | undefined {
  if (!candidates || candidates.length === 0) return undefined;
  const { grants } = table;
  if (!grants) return candidates[0];
  let chosen: TableCertificate | undefined;
  let chosenRank: ReturnType<typeof claimRank>;
  for (const candidate of candidates) {
    const rank = claimRank(grants, candidate.cluster, name);
    if (rank && (!chosenRank || compareClaims(rank, chosenRank) < 0)) {
      chosen = candidate;
      chosenRank = rank;
    }
  }
  return chosen;
}

/** Lower-case, without the trailing dot of an absolute name. */
function normalise(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}
