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
export class CertificateWrites {
  readonly #options: CertificateWritesOptions;
  /** What the store holds: id → identity; undefined until loaded. */
  #stored: Map<string, string> | undefined;
  /** The missing TLS_STORE_KEY was logged. */
  #saidNoKey = false;

  constructor(options: CertificateWritesOptions) {
    this.#options = options;
  }

  /** Forget what the store holds: the next write loads it again. */
  reload(): void {
    this.#stored = undefined;
  }

  /** Throws on the first failed write; what was written before it is remembered. */
  async write(desired: readonly CertificateUse[]): Promise<void> {
    const { writer, cluster, storeKey, logger } = this.#options;
    if (writer === undefined) return;
    if (storeKey === undefined) {
      if (desired.length > 0 && !this.#saidNoKey) {
        this.#saidNoKey = true;
        logger.warn("TLS_STORE_KEY is not set: HTTPS listeners' certificates are not published", {
          cluster,
          certificates: desired.length,
        });
      }
      return;
    }
    this.#stored ??= await loadIdentities(writer);
    const current = this.#stored;
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
  }
}

/** The stored certificates' identities by id; one that does not decode counts as absent (""). */
async function loadIdentities(target: CertificateWriter): Promise<Map<string, string>> {
  const loaded = new Map<string, string>();
  for (const [id, raw] of await target.loadCertificates()) {
    const decoded = decodeCertificateRecord(raw);
    loaded.set(id, decoded.ok ? certificateIdentity(decoded.value) : "");
  }
  return loaded;
}
