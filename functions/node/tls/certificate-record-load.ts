import { X509Certificate } from "node:crypto";
import { createSecureContext, type SecureContext } from "node:tls";
import type { WarnOnce } from "../../../lib/warn-once.js";
import { openKey, sealBinding } from "../../../store/certificate-seal.js";
import { type CertificateRecord, decodeCertificateRecord } from "../../../store/certificates.js";
import { type ClusterGrants, claimRank } from "../../core/trust/cluster-grants.js";
import type { TableCertificate } from "./certificate-table.js";

/** A certificate's chain and opened key. */
export type CertificatePair = { readonly cert: string; readonly key: string };

/** A certificate record as served: decoded, granted, its key opened and its TLS context made. */
export interface LoadedCertificate {
  readonly certificate: TableCertificate;
  /** The leaf's notAfter, seconds since the epoch (NaN when the chain cannot be read as X.509). */
  readonly notAfter: number;
  readonly context: SecureContext;
  /** CertificateSource.pair. */
  readonly pair: CertificatePair | undefined;
}

/** What loading a record needs: where its problems are logged once, TLS_STORE_KEY, CLUSTER_GRANTS. */
export interface RecordLoading {
  readonly warnings: WarnOnce;
  readonly storeKey: Uint8Array;
  readonly grants: ClusterGrants | undefined;
}

/**
 * One field of a cluster's certificates hash as served, or undefined (logged once) when it does not decode,
 * names no host its cluster was granted, or its key does not open or TLS cannot load it. A record whose
 * version `previous` holds already keeps its context (made once per certificate version).
 */
export function loadCertificateRecord(
  loading: RecordLoading,
  stored: { readonly cluster: string; readonly field: string; readonly raw: string },
  previous: ReadonlyMap<string, LoadedCertificate> | undefined,
): LoadedCertificate | undefined {
  const { cluster, field } = stored;
  const problem = `certificate ${cluster}/${field}`;
  const decoded = decodeCertificateRecord(stored.raw);
  if (!decoded.ok || decoded.value.id !== field) {
    const reason = decoded.ok ? `its id is ${decoded.value.id}` : decoded.error;
    loading.warnings.warn(problem, reason, "skipping an invalid certificate record", {
      cluster,
      id: field,
      reason,
    });
    return undefined;
  }
  const record = decoded.value;
  if (!claimsAnyGrantedName(loading.grants, cluster, record)) {
    loading.warnings.warn(
      problem,
      "not granted",
      "skipping a certificate for hosts its cluster was not granted",
      {
        cluster,
        id: record.id,
        hostnames: record.hostnames.slice(0, 5),
      },
    );
    return undefined;
  }
  const certificate = {
    cluster,
    id: record.id,
    version: record.version,
    hostnames: record.hostnames,
    anyHost: record.anyHost,
  };
  const kept = previous?.get(record.id);
  if (kept && kept.certificate.version === record.version) return { ...kept, certificate };
  return openCertificate(loading, problem, certificate, record);
}

/** Opens the record's key and makes its TLS context. */
function openCertificate(
  loading: RecordLoading,
  problem: string,
  certificate: TableCertificate,
  record: CertificateRecord,
): LoadedCertificate | undefined {
  const { cluster, id } = certificate;
  const key = openKey(loading.storeKey, sealBinding(cluster, id), record.key);
  if (!key.ok) {
    loading.warnings.warn(problem, key.error, "skipping a certificate whose key does not open", {
      cluster,
      id,
      reason: key.error,
    });
    return undefined;
  }
  try {
    const loaded = {
      certificate,
      context: createSecureContext({ cert: record.cert, key: key.value }),
      notAfter: leafNotAfter(record.cert),
      pair: { cert: record.cert, key: key.value },
    };
    loading.warnings.clear(problem);
    return loaded;
  } catch (error) {
    const reason = (error as Error).message;
    loading.warnings.warn(problem, reason, "skipping a certificate TLS cannot load", { cluster, id, reason });
    return undefined;
  }
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
