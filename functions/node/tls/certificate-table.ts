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
}

export interface CertificateTable {
  /** Exact names, then wildcard suffixes (`*.example.com` → `example.com`), each to its chosen certificate. */
  readonly exact: ReadonlyMap<string, TableCertificate>;
  readonly wildcard: ReadonlyMap<string, TableCertificate>;
  readonly size: number;
}

export const EMPTY_CERTIFICATE_TABLE: CertificateTable = { exact: new Map(), wildcard: new Map(), size: 0 };

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
  return { exact, wildcard, size: certificates.length };
}

/**
 * The certificate for an SNI server name: an exact name over a wildcard, as listener hostnames rank (Gateway
 * API Listener.hostname); a wildcard covers exactly one more label (RFC 6125 §6.4.3: `*.example.com` covers
 * `a.example.com`, not `example.com` nor `a.b.example.com`). Undefined when none covers it.
 */
export function selectCertificate(
  table: CertificateTable,
  servername: string | undefined,
): TableCertificate | undefined {
  if (!servername) return undefined;
  const name = normalise(servername);
  const exact = table.exact.get(name);
  if (exact) return exact;
  const dot = name.indexOf(".");
  return dot > 0 ? table.wildcard.get(name.slice(dot + 1)) : undefined;
}

/** Whether `host` (a Host or :authority without port, any case) is one of `hostnames`, wildcards as above. */
export function coversHost(hostnames: readonly string[], host: string): boolean {
  const name = normalise(host);
  const dot = name.indexOf(".");
  const parent = dot > 0 ? `*.${name.slice(dot + 1)}` : undefined;
  return hostnames.some((entry) => entry === name || entry === parent);
}

/**
 * RFC 9110 §15.5.20 (421 Misdirected Request): on a TLS connection whose SNI chose a certificate, a request
 * for a host that certificate does not cover was sent to the wrong place (a client reusing a connection for
 * another origin, or a forged SNI to reach another site's routes). `authority` is the Host or :authority
 * as received, port included; a connection without a chosen certificate is never misdirected here.
 */
export function isMisdirected(
  table: CertificateTable,
  servername: string | undefined,
  authority: string | undefined,
): boolean {
  const chosen = selectCertificate(table, servername);
  if (chosen === undefined || authority === undefined) return false;
  return !coversHost(chosen.hostnames, hostOf(authority));
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
