import type { Logger } from "../../lib/logger.js";
import {
  type BackendTlsRecord,
  type BackendTlsWriter,
  backendTlsField,
  backendTlsIdentity,
  decodeBackendTlsRecord,
} from "../../store/backend-tls.js";

export interface BackendTlsWritesOptions {
  readonly writer: BackendTlsWriter | undefined;
  readonly cluster: string;
  readonly logger: Logger;
}

/**
 * Brings the cluster's backend TLS records (store/backend-tls.ts) to the desired ones: a record is written
 * only when its identity (field, version, sealing key) changed, one no longer desired is removed, and a stored
 * record that does not decode counts as absent and is replaced. What the store holds is loaded once and
 * remembered; reload() forgets it.
 */
export function createBackendTlsWrites(options: BackendTlsWritesOptions) {
  const { writer, cluster, logger } = options;
  let stored: Map<string, string> | undefined;

  const load = async (target: BackendTlsWriter) => {
    const loaded = new Map<string, string>();
    for (const [field, raw] of await target.loadBackendTls()) {
      const decoded = decodeBackendTlsRecord(raw);
      loaded.set(field, decoded.ok ? backendTlsIdentity(decoded.value) : "");
    }
    return loaded;
  };

  return {
    reload() {
      stored = undefined;
    },
    /** Throws on the first failed write; what was written before it is remembered. */
    async write(desired: readonly BackendTlsRecord[]): Promise<void> {
      if (writer === undefined) return;
      stored ??= await load(writer);
      const current = stored;
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
    },
  };
}
