import * as v from "valibot";
import type { Result } from "../lib/result.js";
import {
  CertificateHostnameSchema,
  CertificateIdSchema,
  MAX_CERTIFICATE_PEM,
  SealedSchema,
} from "./certificates.js";
import { parseRecordJson, validated } from "./records.js";

/**
 * Backend TLS records (schema version 1): what a Node router needs to open TLS to a cluster's pods, in the
 * cluster's `backend-tls` hash (keys.ts), apart from the listener certificates so that no router ever serves
 * one of them to a client. Two kinds:
 * - `policy:<ns>/<name>`: a BackendTLSPolicy's validation (Gateway API v1): the SNI and name to verify, the
 *   subjectAltNames that replace the name when given, and the CA certificates (or the system's roots). Public:
 *   stored as is. A Service port it applies to says so in its service record (services.ts `tls`).
 * - `client:<ns>/<name>`: a Gateway's backend client certificate (Gateway.spec.tls.backend.clientCertificateRef),
 *   the key sealed under TLS_STORE_KEY as listener keys are (certificate-seal.ts, docs/design.md store rule 7).
 * Written by the certificate script with their own version counter; Workers never read them.
 */
export const BACKEND_TLS_SCHEMA_VERSION = 1;

/** CA certificates one policy may carry (several ConfigMaps' `ca.crt`, each a bundle). */
export const MAX_CA_BUNDLE_PEM = 256 * 1024;

const Sha256Schema = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "sha256 hex"));

/** SubjectAltName: a DNS name (`*.` allowed, as in a certificate) or a URI such as a SPIFFE id. */
export const SubjectAltNameSchema = v.union([
  v.strictObject({ type: v.literal("Hostname"), hostname: CertificateHostnameSchema }),
  v.strictObject({
    type: v.literal("URI"),
    uri: v.pipe(v.string(), v.maxLength(2_048), v.regex(/^[a-z][a-z0-9+.-]*:[^\s]+$/i, "an absolute URI")),
  }),
]);
export type SubjectAltName = v.InferOutput<typeof SubjectAltNameSchema>;

/** The roots a backend's chain must lead to: the policy's CA certificates, or the router's system store. */
export const TrustSchema = v.union([
  v.strictObject({ system: v.literal(true) }),
  v.strictObject({
    pem: v.pipe(v.string(), v.maxLength(MAX_CA_BUNDLE_PEM), v.includes("-----BEGIN CERTIFICATE-----")),
  }),
]);
export type Trust = v.InferOutput<typeof TrustSchema>;

export const BackendTlsPolicyRecordSchema = v.object({
  v: v.literal(BACKEND_TLS_SCHEMA_VERSION),
  kind: v.literal("policy"),
  /** The BackendTLSPolicy, `namespace/name`. */
  id: CertificateIdSchema,
  /** sha256 of what follows: routers keep one TLS setup per version. */
  version: Sha256Schema,
  /** validation.hostname, lower-case: the SNI sent, and the name verified unless subjectAltNames are given. */
  hostname: v.pipe(
    CertificateHostnameSchema,
    v.check((name) => !name.startsWith("*."), "a precise hostname"),
  ),
  /** When given, the backend's certificate must carry one of these, and `hostname` is not verified. */
  subjectAltNames: v.pipe(v.array(SubjectAltNameSchema), v.maxLength(5)),
  trust: TrustSchema,
});
export type BackendTlsPolicyRecord = v.InferOutput<typeof BackendTlsPolicyRecordSchema>;

export const BackendClientCertificateRecordSchema = v.object({
  v: v.literal(BACKEND_TLS_SCHEMA_VERSION),
  kind: v.literal("client"),
  /** The Gateway whose routes' backends get it, `namespace/name`. */
  id: CertificateIdSchema,
  /** sha256 of the chain. */
  version: Sha256Schema,
  cert: v.pipe(v.string(), v.maxLength(MAX_CERTIFICATE_PEM), v.includes("-----BEGIN CERTIFICATE-----")),
  key: SealedSchema,
});
export type BackendClientCertificateRecord = v.InferOutput<typeof BackendClientCertificateRecordSchema>;

export const BackendTlsRecordSchema = v.variant("kind", [
  BackendTlsPolicyRecordSchema,
  BackendClientCertificateRecordSchema,
]);
export type BackendTlsRecord = v.InferOutput<typeof BackendTlsRecordSchema>;

/** The hash field of a record: its kind and id, so a policy and a Gateway of one name stay apart. */
export function backendTlsField(record: Pick<BackendTlsRecord, "kind" | "id">): string {
  return `${record.kind}:${record.id}`;
}

/** What a client certificate's key is sealed to (certificate-seal.ts sealBinding): never a listener record's. */
export function clientCertificateBinding(cluster: string, gateway: string): string {
  return `${cluster}\nbackend-client:${gateway}`;
}

export function decodeBackendTlsRecord(raw: string): Result<BackendTlsRecord> {
  const parsed = parseRecordJson(raw);
  return parsed.ok ? validated(BackendTlsRecordSchema, parsed.value) : parsed;
}

/** Fixed field order, so equal records give equal strings; throws on an invalid record. */
export function serializeBackendTlsRecord(record: BackendTlsRecord): string {
  const checked = validated(BackendTlsRecordSchema, record);
  if (!checked.ok) throw new Error(`invalid backend TLS record ${backendTlsField(record)}: ${checked.error}`);
  const value = checked.value;
  if (value.kind === "client") {
    const { key } = value;
    return JSON.stringify({
      v: value.v,
      kind: value.kind,
      id: value.id,
      version: value.version,
      cert: value.cert,
      key: { alg: key.alg, kid: key.kid, iv: key.iv, tag: key.tag, data: key.data },
    });
  }
  return JSON.stringify({
    v: value.v,
    kind: value.kind,
    id: value.id,
    version: value.version,
    hostname: value.hostname,
    subjectAltNames: value.subjectAltNames,
    trust: value.trust,
  });
}

/**
 * What a sync compares to skip an unchanged write: a client key is sealed with a fresh nonce each time, so
 * its stored strings differ while its version and sealing key do not.
 */
export function backendTlsIdentity(record: BackendTlsRecord): string {
  const sealedBy = record.kind === "client" ? ` ${record.key.kid}` : "";
  return `${backendTlsField(record)} ${record.version}${sealedBy}`;
}

/** The sync side: one cluster's backend TLS records, each write atomic and fenced as the others (store.ts). */
export interface BackendTlsWriter {
  /** Replaces the record under its field and bumps the cluster's backend TLS version. */
  putBackendTls(record: BackendTlsRecord): Promise<void>;
  /** Removes the record of `field` (backendTlsField) and bumps the version. */
  removeBackendTls(field: string): Promise<void>;
  /** The `backend-tls` hash as stored: field → record JSON. */
  loadBackendTls(): Promise<Map<string, string>>;
}

/** The router side: cheap version reads to poll, and a whole cluster's records when its version moved. */
export interface BackendTlsReader {
  /** Every cluster with backend TLS records, and a token that changes with each of its writes. */
  versions(): Promise<Map<string, string>>;
  /** One cluster's `backend-tls` hash: field → record JSON. */
  records(cluster: string): Promise<Map<string, string>>;
}
