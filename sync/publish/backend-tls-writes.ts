import type { Logger } from "../../lib/logger.js";
import {
  BACKEND_TLS_SCHEMA_VERSION,
  type BackendTlsRecord,
  type BackendTlsWriter,
  backendTlsField,
  backendTlsIdentity,
  clientCertificateBinding,
  decodeBackendTlsRecord,
} from "../../store/backend-tls.js";
import { sealKey } from "../../store/certificate-seal.js";
import type { BackendClientCertificateUse } from "../translate/gateway/backend-client-certificate.js";

export interface BackendTlsWritesOptions {
  readonly writer: BackendTlsWriter | undefined;
  readonly cluster: string;
  /** TLS_STORE_KEY: seals the Gateways' backend client keys; without it none is published. */
  readonly storeKey?: Uint8Array | undefined;
  readonly logger: Logger;
}

/**
 * Brings the cluster's backend TLS records (store/backend-tls.ts) to the desired ones: a record is written
 * only when its identity (field, version, sealing key) changed, one no longer desired is removed, and a stored
 * record that does not decode counts as absent and is replaced. What the store holds is loaded once and
 * remembered; reload() forgets it.
 */
export class BackendTlsWrites {
  readonly #options: BackendTlsWritesOptions;
  /** What the store holds: field → identity; undefined until loaded. */
  #stored: Map<string, string> | undefined;
  /** The missing TLS_STORE_KEY was logged (client certificates wait for it). */
  #keylessLogged = false;

  constructor(options: BackendTlsWritesOptions) {
    this.#options = options;
  }

  /** Forget what the store holds: the next write loads it again. */
  reload(): void {
    this.#stored = undefined;
  }

  /** Throws on the first failed write; what was written before it is remembered. */
  async write(
    policies: readonly BackendTlsRecord[],
    clients: readonly BackendClientCertificateUse[] = [],
  ): Promise<void> {
    const { writer, cluster, logger } = this.#options;
    if (writer === undefined) return;
    const desired = [...policies, ...this.#clientRecords(clients)];
    this.#stored ??= await loadIdentities(writer);
    const current = this.#stored;
    for (const record of desired) {
      const field = backendTlsField(record);
      const identity = backendTlsIdentity(record);
      if (current.get(field) === identity) continue;
      await writer.putBackendTls(record);
      current.set(field, identity);
      logger.info("backend TLS published", { cluster, record: field });
    }
    const wanted = new Set(desired.map(backendTlsField));
    for (const field of [...current.keys()]) {
      if (wanted.has(field)) continue;
      await writer.removeBackendTls(field);
      current.delete(field);
      logger.info("backend TLS withdrawn", { cluster, record: field });
    }
  }

  /** A Gateway's client certificate as its record, the key sealed to the cluster and the Gateway. */
  #clientRecords(clients: readonly BackendClientCertificateUse[]): BackendTlsRecord[] {
    const { cluster, storeKey, logger } = this.#options;
    if (clients.length === 0) return [];
    if (storeKey === undefined) {
      if (!this.#keylessLogged)
        logger.warn("not publishing backend client certificates: TLS_STORE_KEY is not set", {});
      this.#keylessLogged = true;
      return [];
    }
    return clients.map(({ gateway, material }) => ({
      v: BACKEND_TLS_SCHEMA_VERSION,
      kind: "client",
      id: gateway,
      version: material.version,
      cert: material.cert,
      key: sealKey(storeKey, clientCertificateBinding(cluster, gateway), material.key),
    }));
  }
}

/** The stored records' identities by field; one that does not decode counts as absent (""). */
async function loadIdentities(target: BackendTlsWriter): Promise<Map<string, string>> {
  const loaded = new Map<string, string>();
  for (const [field, raw] of await target.loadBackendTls()) {
    const decoded = decodeBackendTlsRecord(raw);
    loaded.set(field, decoded.ok ? backendTlsIdentity(decoded.value) : "");
  }
  return loaded;
}
