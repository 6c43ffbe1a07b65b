import type { Logger } from "../../../lib/logger.js";
import { PeriodicRead } from "../../../lib/periodic-read.js";
import { createWarnOnce, type WarnOnce } from "../../../lib/warn-once.js";
import {
  type BackendTlsPolicyRecord,
  type BackendTlsReader,
  type BackendTlsRecord,
  backendTlsField,
  clientCertificateBinding,
  decodeBackendTlsRecord,
} from "../../../store/backend-tls.js";
import { openKey } from "../../../store/certificate-seal.js";
import { CertificatesTooLargeError } from "../../../store/redis/certificate-reader.js";
import { redisFailureFields } from "../../../store/redis/connection-problems.js";
import { type BackendTlsSetup, backendTlsSetup, type ClientCertificatePair } from "./backend-tls-setup.js";

/**
 * What the HTTPS dispatcher asks: how to open TLS to a backend of `policy` in `cluster`, now, presenting
 * `gateway`'s backend client certificate when it has one.
 */
export interface BackendTlsSetups {
  setupFor(cluster: string, policy: string, gateway?: string): BackendTlsSetup | undefined;
  /** A backend refused for `reason` (no usable record, a failed handshake): logged once per backend and reason. */
  refused(address: string, policy: string, reason: string, fields?: Record<string, unknown>): void;
}

export const DEFAULT_BACKEND_TLS_REFRESH_MS = 1_000;

/** A policy's record and its setup without a client certificate. */
interface LoadedPolicy {
  readonly record: BackendTlsPolicyRecord;
  readonly setup: BackendTlsSetup;
}

/** One cluster's policies and Gateways' opened client certificates. */
interface LoadedCluster {
  readonly policies: Map<string, LoadedPolicy>;
  readonly clients: Map<string, ClientCertificatePair>;
}

/**
 * The Node router's view of the backend TLS records (store/backend-tls.ts), read as the certificates are
 * (certificate-source.ts): one small read of each cluster's version per interval, a cluster's hash read again
 * when its version moved, one TLS setup made per policy version (kept while its version stays, so its pools
 * do). A record that does not decode or load is logged once and left out: its backends are refused, never
 * sent to in cleartext. With the store unreachable the last setups keep serving.
 */
export class BackendTlsSource implements BackendTlsSetups {
  readonly #reader: BackendTlsReader;
  readonly #logger: Logger;
  readonly #warnings: WarnOnce;
  readonly #reads: PeriodicRead;
  /** TLS_STORE_KEY: opens the Gateways' backend client keys; without it none is presented. */
  readonly #storeKey: Uint8Array | undefined;
  readonly #versions = new Map<string, string>();
  readonly #byCluster = new Map<string, LoadedCluster>();
  /** `cluster\npolicy\ngateway` → the setup presenting that Gateway's certificate (made when first asked). */
  readonly #withClient = new Map<string, BackendTlsSetup>();
  #failing = false;

  constructor(
    reader: BackendTlsReader,
    logger: Logger,
    options: { readonly storeKey?: Uint8Array | undefined; readonly intervalMs?: number } = {},
  ) {
    this.#reader = reader;
    this.#logger = logger;
    this.#warnings = createWarnOnce(logger);
    this.#storeKey = options.storeKey;
    this.#reads = new PeriodicRead(() => this.#poll(), options.intervalMs ?? DEFAULT_BACKEND_TLS_REFRESH_MS);
  }

  setupFor(cluster: string, policy: string, gateway?: string): BackendTlsSetup | undefined {
    const loaded = this.#byCluster.get(cluster);
    const found = loaded?.policies.get(policy);
    const client = gateway === undefined ? undefined : loaded?.clients.get(gateway);
    if (found === undefined || client === undefined) return found?.setup;
    const key = `${cluster}\n${policy}\n${gateway}`;
    const kept = this.#withClient.get(key);
    if (kept?.version === found.record.version && kept.client?.version === client.version) return kept;
    const setup = this.#setupOf(cluster, found.record, client);
    if (setup) this.#withClient.set(key, setup);
    return setup;
  }

  refused(address: string, policy: string, reason: string, fields: Record<string, unknown> = {}): void {
    this.#warnings.warn(`backend tls ${address} ${policy}`, reason, "backend refused: TLS to it failed", {
      backend: address,
      policy,
      reason,
      ...fields,
    });
  }

  /** Reads what changed now (the first load; tests). */
  refresh(): Promise<void> {
    return this.#reads.refresh();
  }

  /** Reads once `after` settles (the store's first load), then every interval. */
  start(after?: Promise<unknown>): void {
    this.#reads.start(after);
  }

  close(): void {
    this.#reads.close();
  }

  async #poll(): Promise<void> {
    try {
      const now = await this.#reader.versions();
      for (const [cluster, version] of now) {
        if (this.#versions.get(cluster) === version) continue;
        if (await this.#reload(cluster)) this.#versions.set(cluster, version);
      }
      for (const cluster of [...this.#byCluster.keys()]) {
        if (now.has(cluster)) continue;
        this.#byCluster.delete(cluster);
        this.#versions.delete(cluster);
      }
      if (this.#failing) this.#logger.info("backend TLS records readable again");
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        this.#logger.warn("cannot read backend TLS records; using the last ones", redisFailureFields(error));
      }
      this.#failing = true;
    }
  }

  /** False when the cluster's hash was too large to read (its last setups keep serving). */
  async #reload(cluster: string): Promise<boolean> {
    let raw: Map<string, string>;
    try {
      raw = await this.#reader.records(cluster);
      this.#warnings.clear(`backend tls records ${cluster}`);
    } catch (error) {
      if (!(error instanceof CertificatesTooLargeError)) throw error;
      this.#warnings.warn(
        `backend tls records ${cluster}`,
        "too large",
        "not reading a cluster's backend TLS records: too many or too large",
        { cluster, records: error.records, bytes: error.bytes },
      );
      return true;
    }
    const previous = this.#byCluster.get(cluster);
    const loaded: LoadedCluster = { policies: new Map(), clients: new Map() };
    for (const [field, value] of raw) {
      const record = this.#decoded(cluster, field, value);
      if (record?.kind === "client") {
        const pair = this.#opened(cluster, record);
        if (pair) loaded.clients.set(record.id, pair);
      }
      if (record?.kind !== "policy") continue;
      const kept = previous?.policies.get(record.id);
      if (kept?.record.version === record.version) {
        loaded.policies.set(record.id, kept);
        continue;
      }
      const setup = this.#setupOf(cluster, record);
      if (setup) loaded.policies.set(record.id, { record, setup });
    }
    this.#byCluster.set(cluster, loaded);
    return true;
  }

  /** A Gateway's client certificate with its key opened; undefined (logged once) when it cannot be. */
  #opened(cluster: string, record: BackendTlsRecord & { kind: "client" }): ClientCertificatePair | undefined {
    const problem = `backend tls record ${cluster}/${backendTlsField(record)}`;
    const key =
      this.#storeKey === undefined
        ? { ok: false as const, error: "TLS_STORE_KEY is not set" }
        : openKey(this.#storeKey, clientCertificateBinding(cluster, record.id), record.key);
    if (!key.ok) {
      this.#warnings.warn(problem, key.error, "not presenting a Gateway's backend client certificate", {
        cluster,
        gateway: record.id,
        reason: key.error,
      });
      return undefined;
    }
    return { gateway: record.id, version: record.version, cert: record.cert, key: key.value };
  }

  #decoded(cluster: string, field: string, raw: string): BackendTlsRecord | undefined {
    const problem = `backend tls record ${cluster}/${field}`;
    const decoded = decodeBackendTlsRecord(raw);
    if (decoded.ok && backendTlsField(decoded.value) === field) {
      this.#warnings.clear(problem);
      return decoded.value;
    }
    const reason = decoded.ok ? `its field is ${backendTlsField(decoded.value)}` : decoded.error;
    this.#warnings.warn(problem, reason, "skipping an invalid backend TLS record", {
      cluster,
      field,
      reason,
    });
    return undefined;
  }

  #setupOf(
    cluster: string,
    record: BackendTlsPolicyRecord,
    client?: ClientCertificatePair,
  ): BackendTlsSetup | undefined {
    const problem = `backend tls record ${cluster}/${backendTlsField(record)}${client ? ` ${client.gateway}` : ""}`;
    try {
      return backendTlsSetup(
        cluster,
        record,
        (address, setup, reason, error) =>
          this.refused(address, setup.policy, reason, { cluster, error: error.message }),
        client,
      );
    } catch (error) {
      const reason = (error as Error).message;
      this.#warnings.warn(problem, reason, "skipping a backend TLS policy TLS cannot load", {
        cluster,
        policy: record.id,
        reason,
      });
      return undefined;
    }
  }
}
