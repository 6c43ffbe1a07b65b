/**
 * Which certificate a TLS handshake gets, and which hosts a connection may then ask for. Pure: the table is
 * built once per change of the certificate records (certificate-source.ts) and read per handshake and request.
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
  /** Exact names, then wildcard suffixes (`*.example.com` → `example.com`), each to its chosen certificate. */
  readonly exact: ReadonlyMap<string, TableCertificate>;
  readonly wildcard: ReadonlyMap<string, TableCertificate>;
  /** The first certificate of a listener without a hostname: for any other SNI, or none. */
  readonly fallback: TableCertificate | undefined;
  readonly size: number;
}

export const EMPTY_CERTIFICATE_TABLE: CertificateTable = {
  exact: new Map(),
  wildcard: new Map(),
  fallback: undefined,
  size: 0,
};

/**
 * The table of `certificates`. When several claim one name, the first by cluster, then id, wins, so every
 * router picks the same certificate whatever order the records were read in.
 */
export function certificateTable(certificates: readonly TableCertificate[]): CertificateTable {
  const ordered = [...certificates].sort((a, b) => compare(a.cluster, b.cluster) || compare(a.id, b.id));
  const exact = new Map<string, TableCertificate>();
  const wildcard = new Map<string, TableCertificate>();
  for (const certificate of ordered) {
    for (const name of certificate.hostnames) {
      const into = name.startsWith("*.") ? wildcard : exact;
      const key = name.startsWith("*.") ? name.slice(2) : name;
      if (!into.has(key)) into.set(key, certificate);
    }
  }
  const fallback = ordered.find((certificate) => certificate.anyHost === true);
  return { exact, wildcard, fallback, size: certificates.length };
}

/**
 * The certificate for an SNI server name: an exact name over a wildcard, and the longest wildcard over a
 * shorter one, as listener hostnames rank (Gateway API Listener.hostname: `*.example.com` covers one or more
 * labels, never `example.com`; the conformance test HTTPSListenerMultiTLSCertsLongestMatchingSNI), then the
 * certificate of a listener without a
 * hostname (it accepts every host). Undefined when none fits. (Node asks only for a client that sent an SNI:
 * one that sent none gets no certificate, and its handshake fails.)
 */
export function selectCertificate(
  table: CertificateTable,
  servername: string | undefined,
): TableCertificate | undefined {
  if (!servername) return table.fallback;
  const name = normalise(servername);
  const exact = table.exact.get(name);
  if (exact) return exact;
  for (let dot = name.indexOf("."); dot > 0; dot = name.indexOf(".", dot + 1)) {
    const wildcard = table.wildcard.get(name.slice(dot + 1));
    if (wildcard) return wildcard;
  }
  return table.fallback;
}

/**
 * RFC 9110 §15.5.20 (421 Misdirected Request): on a TLS connection whose SNI chose a certificate, a request
 * whose host would have chosen another one (or none) was sent on the wrong connection: a client reusing a
 * connection for another origin (RFC 9113 §9.1.1), or an SNI forged to reach another site's routes. The
 * client retries on a connection of its own. `authority` is the Host or :authority as received, port
 * included; a connection without a chosen certificate is never misdirected here.
 */
export function isMisdirected(
  table: CertificateTable,
  servername: string | undefined,
  authority: string | undefined,
): boolean {
  const chosen = selectCertificate(table, servername);
  if (chosen === undefined || authority === undefined) return false;
  const host = hostOf(authority);
  return host === "" || selectCertificate(table, host) !== chosen;
}

/** The host of an authority: without its port, an IPv6 literal without brackets. */
function hostOf(authority: string): string {
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    return end > 0 ? authority.slice(1, end) : authority;
  }
  const colon = authority.lastIndexOf(":");
  return colon >= 0 ? authority.slice(0, colon) : authority;
}

/** Lower-case, without the trailing dot of an absolute name. */
function normalise(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
