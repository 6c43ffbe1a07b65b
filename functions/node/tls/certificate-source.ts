import type { SecureContext } from "node:tls";
import type { Logger } from "../../../lib/logger.js";
import { PeriodicRead } from "../../../lib/periodic-read.js";
import type { MetricFamily } from "../../../lib/prometheus.js";
import { createWarnOnce, type WarnOnce } from "../../../lib/warn-once.js";
import type { CertificateReader } from "../../../store/certificates.js";
import { CertificatesTooLargeError } from "../../../store/redis/certificate-reader.js";
import { redisFailureFields } from "../../../store/redis/connection-problems.js";
import type { ClusterGrants } from "../../core/trust/cluster-grants.js";
import {
  type CertificatePair,
  type LoadedCertificate,
  loadCertificateRecord,
  type RecordLoading,
} from "./certificate-record-load.js";
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
  return new PolledCertificates(options);
}

const keyOf = (certificate: TableCertificate) =>
  `${certificate.cluster}\n${certificate.id}\n${certificate.version}`;

/** createCertificateSource's state: what was read per cluster, and the table, contexts and pairs made of it. */
class PolledCertificates implements CertificateSource {
  readonly #options: CertificateSourceOptions;
  readonly #warnings: WarnOnce;
  readonly #versions = new Map<string, string>();
  readonly #byCluster = new Map<string, Map<string, LoadedCertificate>>();
  #table = EMPTY_CERTIFICATE_TABLE;
  #expiries: readonly CertificateExpiry[] = [];
  readonly #contexts = new Map<string, SecureContext>();
  readonly #pairs = new Map<string, CertificatePair>();
  readonly #reads: PeriodicRead;
  #failing = false;
  readonly #loading: RecordLoading;

  constructor(options: CertificateSourceOptions) {
    this.#options = options;
    this.#warnings = createWarnOnce(options.logger);
    this.#loading = { warnings: this.#warnings, storeKey: options.storeKey, grants: options.grants };
    this.#reads = new PeriodicRead(() => this.#poll(), options.intervalMs ?? DEFAULT_CERTIFICATE_REFRESH_MS);
  }

  table(): CertificateTable {
    return this.#table;
  }

  context(certificate: TableCertificate): SecureContext | undefined {
    return this.#contexts.get(keyOf(certificate));
  }

  pair(certificate: TableCertificate): CertificatePair | undefined {
    return this.#pairs.get(keyOf(certificate));
  }

  expiries(): readonly CertificateExpiry[] {
    return this.#expiries;
  }

  refresh(): Promise<void> {
    return this.#reads.refresh();
  }

  start(after?: Promise<unknown>): void {
    this.#reads.start(after);
  }

  close(): void {
    this.#reads.close();
  }

  async #poll(): Promise<void> {
    try {
      const now = await this.#options.reader.versions();
      // A cluster the grants do not list is not read at all (not even its records' names).
      const { grants } = this.#options;
      if (grants) for (const cluster of [...now.keys()]) if (!grants.has(cluster)) now.delete(cluster);
      const changed = await this.#reloadChanged(now);
      await this.#options.onVersions?.(changed, new Set(now.keys()));
      for (const cluster of changed) this.#versions.set(cluster, now.get(cluster) as string);
      for (const cluster of [...this.#byCluster.keys()]) {
        if (now.has(cluster)) continue;
        this.#byCluster.delete(cluster);
        this.#versions.delete(cluster);
      }
      this.#rebuild();
      if (this.#failing) this.#options.logger.info("certificate records readable again");
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        this.#options.logger.warn(
          "cannot read certificate records; serving the last ones",
          redisFailureFields(error),
        );
      }
      this.#failing = true;
    }
  }

  /** Reads again each cluster whose version moved; returns them. */
  async #reloadChanged(now: ReadonlyMap<string, string>): Promise<string[]> {
    const changed: string[] = [];
    for (const [cluster, version] of now) {
      if (this.#versions.get(cluster) === version) continue;
      try {
        this.#byCluster.set(cluster, await this.#loadCluster(cluster));
        this.#warnings.clear(`certificates ${cluster}`);
      } catch (error) {
        if (!(error instanceof CertificatesTooLargeError)) throw error;
        // Its last certificates read keep serving; the others are not held up.
        this.#warnings.warn(
          `certificates ${cluster}`,
          "too large",
          "not reading a cluster's certificate records: too many or too large",
          { cluster, records: error.records, bytes: error.bytes },
        );
      }
      changed.push(cluster);
    }
    return changed;
  }

  /** The table, contexts, pairs and expiries of every certificate loaded now. */
  #rebuild(): void {
    const all = [...this.#byCluster.values()].flatMap((loaded) => [...loaded.values()]);
    this.#table = certificateTable(
      all.map((item) => item.certificate),
      { grants: this.#options.grants, ownCluster: this.#options.ownCluster },
    );
    this.#contexts.clear();
    this.#pairs.clear();
    this.#expiries = all
      .filter((item) => Number.isFinite(item.notAfter))
      .map(({ certificate, notAfter }) => ({ cluster: certificate.cluster, id: certificate.id, notAfter }));
    for (const item of all) {
      this.#contexts.set(keyOf(item.certificate), item.context);
      if (item.pair) this.#pairs.set(keyOf(item.certificate), item.pair);
    }
    this.#options.onTable?.(this.#table);
  }

  async #loadCluster(cluster: string): Promise<Map<string, LoadedCertificate>> {
    const previous = this.#byCluster.get(cluster);
    const loaded = new Map<string, LoadedCertificate>();
    for (const [field, raw] of await this.#options.reader.records(cluster)) {
      const item = loadCertificateRecord(this.#loading, { cluster, field, raw }, previous);
      if (item) loaded.set(item.certificate.id, item);
    }
    return loaded;
  }
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
