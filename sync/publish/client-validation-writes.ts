import type { Logger } from "../../lib/logger.js";
import type { CertificateWriter } from "../../store/certificates.js";
import {
  CLIENT_VALIDATION_SCHEMA_VERSION,
  type ClientValidationRecord,
  clientValidationId,
  serializeClientValidationRecord,
} from "../../store/client-validations.js";
import type { ClientValidationUse } from "../translate/gateway/frontend-validation.js";

export interface ClientValidationWritesOptions {
  readonly writer: CertificateWriter | undefined;
  readonly cluster: string;
  readonly logger: Logger;
}

/**
 * Brings the cluster's client validation records (store/client-validations.ts) to the validations our
 * Gateways' HTTPS listeners ask for: one per Gateway and port, written only when its serialised form changed,
 * removed when no listener asks for it any more. Nothing in them is secret, so they are written with or
 * without TLS_STORE_KEY: a router that serves the listeners' certificates finds their validation beside them.
 */
export class ClientValidationWrites {
  readonly #options: ClientValidationWritesOptions;
  /** What the store holds: id → serialised record; undefined until loaded. */
  #stored: Map<string, string> | undefined;

  constructor(options: ClientValidationWritesOptions) {
    this.#options = options;
  }

  /** Forget what the store holds: the next write loads it again. */
  reload(): void {
    this.#stored = undefined;
  }

  /** Throws on the first failed write; what was written before it is remembered. */
  async write(desired: readonly ClientValidationUse[]): Promise<void> {
    const { writer, cluster, logger } = this.#options;
    if (writer === undefined) return;
    this.#stored ??= await writer.loadClientValidations();
    const current = this.#stored;
    const wanted = new Set<string>();
    for (const use of desired) {
      const record = recordOf(use);
      wanted.add(record.id);
      const raw = serializeClientValidationRecord(record);
      if (current.get(record.id) === raw) continue;
      await writer.putClientValidation(record);
      current.set(record.id, raw);
      logger.info("client certificate validation published", { cluster, id: record.id, mode: record.mode });
    }
    for (const id of [...current.keys()]) {
      if (wanted.has(id)) continue;
      await writer.removeClientValidation(id);
      current.delete(id);
      logger.info("client certificate validation withdrawn", { cluster, id });
    }
  }
}

function recordOf(use: ClientValidationUse): ClientValidationRecord {
  return {
    v: CLIENT_VALIDATION_SCHEMA_VERSION,
    id: clientValidationId(use.gateway, use.port),
    gateway: use.gateway,
    port: use.port,
    hostnames: [...use.hostnames],
    ...(use.anyHost ? { anyHost: true } : {}),
    mode: use.mode,
    ca: use.bundle.pem,
    version: use.bundle.version,
  };
}
