import type { Logger } from "../../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../../lib/warn-once.js";
import type { CertificateReader } from "../../../store/certificates.js";
import { decodeClientValidationRecord } from "../../../store/client-validations.js";
import { CertificatesTooLargeError } from "../../../store/redis/certificate-reader.js";
import {
  type ClientValidationTable,
  clientValidationTable,
  EMPTY_CLIENT_VALIDATION_TABLE,
  type TableValidation,
} from "./client-validation-table.js";

/**
 * The router's view of the client validation records (store/client-validations.ts). It reads no version of its
 * own: the certificate source polls the clusters' certificate versions, which the same script bumps, and
 * hands each poll's changed and present clusters to `update` (certificate-source.ts onVersions). A record
 * that does not decode is logged once and left out; the rest keep serving.
 */
export class ClientValidationSource {
  readonly #reader: CertificateReader;
  readonly #gateways: ReadonlySet<string> | undefined;
  readonly #warnings: WarnOnce;
  readonly #byCluster = new Map<string, readonly TableValidation[]>();
  #table: ClientValidationTable = EMPTY_CLIENT_VALIDATION_TABLE;

  constructor(reader: CertificateReader, logger: Logger, gateways?: ReadonlySet<string>) {
    this.#reader = reader;
    this.#gateways = gateways;
    this.#warnings = createWarnOnce(logger);
  }

  table(): ClientValidationTable {
    return this.#table;
  }

  /** Reads the clusters whose version moved, forgets those gone, and builds the table again if anything did. */
  async update(changed: readonly string[], present: ReadonlySet<string>): Promise<void> {
    let moved = false;
    for (const cluster of changed) {
      try {
        this.#byCluster.set(cluster, await this.#load(cluster));
        this.#warnings.clear(`client validations ${cluster}`);
      } catch (error) {
        if (!(error instanceof CertificatesTooLargeError)) throw error;
        // Its last records read keep serving; the other clusters are not held up.
        this.#warnings.warn(
          `client validations ${cluster}`,
          "too large",
          "not reading a cluster's client validation records: too many or too large",
          { cluster, records: error.records, bytes: error.bytes },
        );
      }
      moved = true;
    }
    for (const cluster of [...this.#byCluster.keys()]) {
      if (present.has(cluster)) continue;
      this.#byCluster.delete(cluster);
      moved = true;
    }
    if (moved) this.#table = clientValidationTable([...this.#byCluster.values()].flat(), this.#gateways);
  }

  async #load(cluster: string): Promise<TableValidation[]> {
    const loaded: TableValidation[] = [];
    for (const [field, raw] of await this.#reader.clientValidations(cluster)) {
      const problem = `client validation ${cluster}/${field}`;
      const decoded = decodeClientValidationRecord(raw);
      if (!decoded.ok || decoded.value.id !== field) {
        const reason = decoded.ok ? `its id is ${decoded.value.id}` : decoded.error;
        this.#warnings.warn(problem, reason, "skipping an invalid client validation record", {
          cluster,
          id: field,
          reason,
        });
        continue;
      }
      this.#warnings.clear(problem);
      const { id, gateway, port, hostnames, anyHost, mode, ca, version } = decoded.value;
      loaded.push({ cluster, id, gateway, port, hostnames, anyHost: anyHost === true, mode, ca, version });
    }
    return loaded;
  }
}
