import {
  type BackendTlsReader,
  type BackendTlsWriter,
  backendTlsField,
  serializeBackendTlsRecord,
} from "./backend-tls.js";
import { type CertificateWriter, serializeCertificateRecord } from "./certificates.js";
import { serializeClientValidationRecord } from "./client-validations.js";

/**
 * One per-cluster hash that routers poll by a version counter (the Redis layout's `certificates` and
 * `backend-tls` with their `-version` keys), as MemoryStore keeps it: the fields as stored, and a counter every
 * write bumps, also a write to a hash that rides on this one's counter (`client-validations`).
 */
export class VersionedHash {
  readonly fields = new Map<string, string>();
  version = 0;

  put(field: string, raw: string, hash: Map<string, string> = this.fields): void {
    hash.set(field, raw);
    this.version++;
  }

  remove(field: string, hash: Map<string, string> = this.fields): void {
    hash.delete(field);
    this.version++;
  }
}

/** MemoryStore's CertificateWriter of one cluster: its certificates, and the client validations beside them. */
export function memoryCertificateWriter(
  certificates: VersionedHash,
  validations: Map<string, string>,
  fenced: () => void,
): CertificateWriter {
  return {
    putCertificate: async (record) => {
      const raw = serializeCertificateRecord(record);
      fenced();
      certificates.put(record.id, raw);
    },
    removeCertificate: async (id) => {
      fenced();
      certificates.remove(id);
    },
    loadCertificates: async () => new Map(certificates.fields),
    putClientValidation: async (record) => {
      const raw = serializeClientValidationRecord(record);
      fenced();
      certificates.put(record.id, raw, validations);
    },
    removeClientValidation: async (id) => {
      fenced();
      certificates.remove(id, validations);
    },
    loadClientValidations: async () => new Map(validations),
  };
}

/** MemoryStore's BackendTlsWriter of one cluster. */
export function memoryBackendTlsWriter(hash: VersionedHash, fenced: () => void): BackendTlsWriter {
  return {
    putBackendTls: async (record) => {
      const raw = serializeBackendTlsRecord(record);
      fenced();
      hash.put(backendTlsField(record), raw);
    },
    removeBackendTls: async (field) => {
      fenced();
      hash.remove(field);
    },
    loadBackendTls: async () => new Map(hash.fields),
  };
}

/** A router's reader over one such hash of every cluster: clusters that ever wrote one, and their fields. */
export function versionedHashReader(
  hashes: () => Iterable<readonly [cluster: string, hash: VersionedHash]>,
): BackendTlsReader {
  return {
    async versions(): Promise<Map<string, string>> {
      const versions = new Map<string, string>();
      for (const [name, hash] of hashes()) if (hash.version > 0) versions.set(name, String(hash.version));
      return versions;
    },
    async records(cluster: string): Promise<Map<string, string>> {
      for (const [name, hash] of hashes()) if (name === cluster) return new Map(hash.fields);
      return new Map();
    },
  };
}
