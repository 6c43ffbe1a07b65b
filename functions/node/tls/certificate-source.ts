import { X509Certificate } from "node:crypto";
import { createSecureContext, type SecureContext } from "node:tls";
import type { Logger } from "../../../lib/logger.js";
import type { MetricFamily } from "../../../lib/prometheus.js";
import { createWarnOnce } from "../../../lib/warn-once.js";
import { openKey, sealBinding } from "../../../store/certificate-seal.js";
import {
  type CertificateReader,
  type CertificateRecord,
  decodeCertificateRecord,
} from "../../../store/certificates.js";
import { CertificatesTooLargeError } from "../../../store/redis/certificate-reader.js";
import { redisFailureFields } from "../../../store/redis/connection-problems.js";
import { type ClusterGrants, claimRank } from "../../core/cluster-grants.js";
import {
  type CertificateTable,
  certificateTable,
  EMPTY_CERTIFICATE_TABLE,
  type TableCertificate,
} from "./certificate-table.js";

export interface CertificateSourceOptions {
  readonly reader: CertificateReader;
  /** TLS_STORE_KEY: opens the sealed keys. */
  readonly storeKey: Uint8Array;
  readonly logger: Logger;
  /** How often the certificate versions are read: how long a renewal takes to reach new handshakes. */
  readonly intervalMs?: number;
  /** CLUSTER_GRANTS: certificates serve only granted names (certificate-table.ts); ungranted ones are never opened. */
  readonly grants?: ClusterGrants | undefined;
  /** ROUTER_CLUSTER (certificate-table.ts: without grants, its certificates come first). */
  readonly ownCluster?: string | undefined;
  /** Called after each read that built a new table. */
  readonly onTable?: (table: CertificateTable) => void;
  /**
   * Called in each read, before the table is built: the clusters whose certificate version moved, and every
   * cluster read. What the certificate script also writes (client validation records) is read by it.
   */
  readonly onVersions?: (changed: readonly string[], present: ReadonlySet<string>) => Promise<void>;
}

/** The router's view of the certificate records: the table SNI reads, and a TLS context per certificate. */
export interface CertificateSource {
  table(): CertificateTable;
  /** The TLS context of a certificate of the current table (made once per version). */
  context(certificate: TableCertificate): SecureContext | undefined;
  /**
   * The chain and opened key of a certificate: for a listener without hostname's (the one a client without
   * SNI gets: Node asks SNICallback only when the client sent a name, so the server's default context holds
   * it), and for TLS contexts that also hold a client validation's CA bundle (tls-termination.ts).
   */
  pair(certificate: TableCertificate): { readonly cert: string; readonly key: string } | undefined;
  /** Each certificate served and when its leaf expires (edgeslice_tls_certificate_expiry_timestamp_seconds). */
  expiries(): readonly CertificateExpiry[];
  /** Reads what changed now (the first load; tests). */
  refresh(): Promise<void>;
  /** Reads once `after` settles (the store's connection), then every interval. */
  start(after?: Promise<unknown>): void;
  close(): void;
}

export interface CertificateExpiry {
  readonly cluster: string;
  readonly id: string;
  /** The leaf's notAfter, seconds since the epoch. */
  readonly notAfter: number;
}

interface Loaded {
  readonly certificate: TableCertificate;
  /** The leaf's notAfter, seconds since the epoch (NaN when the chain cannot be read as X.509). */
  readonly notAfter: number;
  readonly context: SecureContext;
  /** CertificateSource.pair. */
  readonly pair: { readonly cert: string; readonly key: string } | undefined;
}

export const DEFAULT_CERTIFICATE_REFRESH_MS = 1_000;

/**
 * Polls the store's certificate versions (one small read per cluster, off the handshake path) and re-reads a
 * cluster whose version moved: each record validated, its key opened with TLS_STORE_KEY and a TLS context made
 * once per certificate version, so a renewed Secret reaches new handshakes within a poll while open
 * connections keep theirs. A record that does not decode, open or load is logged once and left out; the rest
 * keep serving. With the store unreachable the last table keeps serving. Under CLUSTER_GRANTS a cluster the
 * grants do not list is never read, and a record naming no host its cluster was granted is never opened.
 */
export function createCertificateSource(options: CertificateSourceOptions): CertificateSource {
  const { reader, storeKey, logger, grants } = options;
  const warnings = createWarnOnce(logger);
  const versions = new Map<string, string>();
  const byCluster = new Map<string, Map<string, Loaded>>();
  let table = EMPTY_CERTIFICATE_TABLE;
  let expiries: readonly CertificateExpiry[] = [];
  const contexts = new Map<string, SecureContext>();
  const pairs = new Map<string, { readonly cert: string; readonly key: string }>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let failing = false;

  const keyOf = (certificate: TableCertificate) =>
    `${certificate.cluster}\n${certificate.id}\n${certificate.version}`;

  const loadCluster = async (cluster: string): Promise<Map<string, Loaded>> => {
    const previous = byCluster.get(cluster);
    const loaded = new Map<string, Loaded>();
    for (const [field, raw] of await reader.records(cluster)) {
      const problem = `certificate ${cluster}/${field}`;
      const decoded = decodeCertificateRecord(raw);
      if (!decoded.ok || decoded.value.id !== field) {
        const reason = decoded.ok ? `its id is ${decoded.value.id}` : decoded.error;
        warnings.warn(problem, reason, "skipping an invalid certificate record", {
          cluster,
          id: field,
          reason,
        });
        continue;
      }
      const record = decoded.value;
      if (!claimsAnyGrantedName(grants, cluster, record)) {
        warnings.warn(
          problem,
          "not granted",
          "skipping a certificate for hosts its cluster was not granted",
          {
            cluster,
            id: record.id,
            hostnames: record.hostnames.slice(0, 5),
          },
        );
        continue;
      }
      const certificate = {
        cluster,
        id: record.id,
        version: record.version,
        hostnames: record.hostnames,
        anyHost: record.anyHost,
      };
      const kept = previous?.get(record.id);
      if (kept && kept.certificate.version === record.version) {
        loaded.set(record.id, { ...kept, certificate });
        continue;
      }
      const key = openKey(storeKey, sealBinding(cluster, record.id), record.key);
      if (!key.ok) {
        warnings.warn(problem, key.error, "skipping a certificate whose key does not open", {
          cluster,
          id: record.id,
          reason: key.error,
        });
        continue;
      }
      try {
        loaded.set(record.id, {
          certificate,
          context: createSecureContext({ cert: record.cert, key: key.value }),
          notAfter: leafNotAfter(record.cert),
          pair: { cert: record.cert, key: key.value },
        });
        warnings.clear(problem);
      } catch (error) {
        const reason = (error as Error).message;
        warnings.warn(problem, reason, "skipping a certificate TLS cannot load", {
          cluster,
          id: record.id,
          reason,
        });
      }
    }
    return loaded;
  };

  const poll = async () => {
    try {
      const now = await reader.versions();
      // A cluster the grants do not list is not read at all (not even its records' names).
      if (grants) for (const cluster of [...now.keys()]) if (!grants.has(cluster)) now.delete(cluster);
      const changed: string[] = [];
      for (const [cluster, version] of now) {
        if (versions.get(cluster) === version) continue;
        try {
          byCluster.set(cluster, await loadCluster(cluster));
          warnings.clear(`certificates ${cluster}`);
        } catch (error) {
          if (!(error instanceof CertificatesTooLargeError)) throw error;
          // Its last certificates read keep serving; the others are not held up.
          warnings.warn(
            `certificates ${cluster}`,
            "too large",
            "not reading a cluster's certificate records: too many or too large",
            { cluster, records: error.records, bytes: error.bytes },
          );
        }
        changed.push(cluster);
      }
      await options.onVersions?.(changed, new Set(now.keys()));
      for (const cluster of changed) versions.set(cluster, now.get(cluster) as string);
      for (const cluster of [...byCluster.keys()]) {
        if (!now.has(cluster)) {
          byCluster.delete(cluster);
          versions.delete(cluster);
        }
      }
      const all = [...byCluster.values()].flatMap((loaded) => [...loaded.values()]);
      table = certificateTable(
        all.map((item) => item.certificate),
        { grants, ownCluster: options.ownCluster },
      );
      contexts.clear();
      pairs.clear();
      expiries = all
        .filter((item) => Number.isFinite(item.notAfter))
        .map(({ certificate, notAfter }) => ({ cluster: certificate.cluster, id: certificate.id, notAfter }));
      for (const item of all) {
        contexts.set(keyOf(item.certificate), item.context);
        if (item.pair) pairs.set(keyOf(item.certificate), item.pair);
      }
      options.onTable?.(table);
      if (failing) logger.info("certificate records readable again");
      failing = false;
    } catch (error) {
      if (!failing) {
        logger.warn("cannot read certificate records; serving the last ones", redisFailureFields(error));
      }
      failing = true;
    }
  };

  const refresh = () => {
    running ??= poll().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    table: () => table,
    context: (certificate) => contexts.get(keyOf(certificate)),
    pair: (certificate) => pairs.get(keyOf(certificate)),
    expiries: () => expiries,
    refresh,
    start(after) {
      void Promise.resolve(after)
        .catch(() => undefined)
        .then(refresh);
      timer = setInterval(() => void refresh(), options.intervalMs ?? DEFAULT_CERTIFICATE_REFRESH_MS);
      timer.unref();
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/** edgeslice_tls_certificate_expiry_timestamp_seconds of the certificates served. */
export function certificateExpiryFamily(expiries: readonly CertificateExpiry[]): MetricFamily {
  return {
    name: "edgeslice_tls_certificate_expiry_timestamp_seconds",
    type: "gauge",
    help: "When each certificate served expires (its leaf's notAfter, seconds since the epoch), by cluster and Secret.",
    samples: expiries.map(({ cluster, id, notAfter }) => ({ labels: { cluster, id }, value: notAfter })),
  };
}

/** The first certificate of a PEM chain (the leaf, RFC 8446 §4.4.2 order): its notAfter in seconds. */
function leafNotAfter(chain: string): number {
  try {
    return Date.parse(new X509Certificate(chain).validTo) / 1000;
  } catch {
    return Number.NaN;
  }
}

/** Whether the record names a host (or, for a listener without hostname, every host) its cluster may claim. */
function claimsAnyGrantedName(
  grants: ClusterGrants | undefined,
  cluster: string,
  record: CertificateRecord,
): boolean {
  if (!grants) return true;
  const names = record.anyHost ? ["*", ...record.hostnames] : record.hostnames;
  return names.some((name) => claimRank(grants, cluster, name) !== undefined);
}
