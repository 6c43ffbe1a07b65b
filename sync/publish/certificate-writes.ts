import type { Logger } from "../../lib/logger.js";
import { sealBinding, sealKey } from "../../store/certificate-seal.js";
import {
  CERTIFICATE_SCHEMA_VERSION,
  type CertificateRecord,
  type CertificateWriter,
  certificateIdentity,
  decodeCertificateRecord,
} from "../../store/certificates.js";
import type { CertificateUse } from "../translate/gateway/certificate-refs.js";

export interface CertificateWritesOptions {
  readonly writer: CertificateWriter | undefined;
  readonly cluster: string;
  /** TLS_STORE_KEY; without it no certificate is published, and the sync says so once. */
  readonly storeKey: Uint8Array | undefined;
  readonly logger: Logger;
}

/**
 * Brings the cluster's certificate records to the desired certificates: each key sealed under TLS_STORE_KEY
 * (store/certificate-seal.ts) at the moment it is written, never kept sealed or in the clear anywhere else. A
 * record is rewritten only when its id, version or hostnames changed (a fresh nonce makes every sealed form
 * differ); a stored record that does not decode counts as absent and is replaced.
 */
export function createCertificateWrites(options: CertificateWritesOptions) {
  const { writer, cluster, storeKey, logger } = options;
  /** What the store holds: id → identity; undefined until loaded. */
  let stored: Map<string, string> | undefined;
  let saidNoKey = false;

  const load = async (target: CertificateWriter) => {
    const loaded = new Map<string, string>();
    for (const [id, raw] of await target.loadCertificates()) {
      const decoded = decodeCertificateRecord(raw);
      loaded.set(id, decoded.ok ? certificateIdentity(decoded.value) : "");
    }
    return loaded;
  };

  return {
    /** Forget what the store holds: the next write loads it again. */
    reload() {
      stored = undefined;
    },
    /** Throws on the first failed write; what was written before it is remembered. */
    async write(desired: readonly CertificateUse[]): Promise<void> {
      if (writer === undefined) return;
      if (storeKey === undefined) {
        if (desired.length > 0 && !saidNoKey) {
          saidNoKey = true;
          logger.warn("TLS_STORE_KEY is not set: HTTPS listeners' certificates are not published", {
            cluster,
            certificates: desired.length,
          });
        }
        return;
      }
      stored ??= await load(writer);
      const current = stored;
      for (const use of desired) {
        const record: CertificateRecord = {
          v: CERTIFICATE_SCHEMA_VERSION,
          id: use.id,
          hostnames: [...use.hostnames],
          ...(use.anyHost ? { anyHost: true } : {}),
          version: use.material.version,
          cert: use.material.cert,
          key: sealKey(storeKey, sealBinding(cluster, use.id), use.material.key),
        };
        const identity = certificateIdentity(record);
        if (current.get(use.id) === identity) continue;
        await writer.putCertificate(record);
        current.set(use.id, identity);
        logger.info("certificate published", { cluster, secret: use.id, hostnames: use.hostnames });
      }
      const wanted = new Set(desired.map((use) => use.id));
      for (const id of [...current.keys()]) {
        if (wanted.has(id)) continue;
        await writer.removeCertificate(id);
        current.delete(id);
        logger.info("certificate withdrawn", { cluster, secret: id });
      }
    },
  };
}
