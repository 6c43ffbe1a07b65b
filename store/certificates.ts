import * as v from "valibot";
import { ConfigurationError } from "../lib/configuration-error.js";
import { optionalText } from "../lib/env.js";
import type { Result } from "../lib/result.js";
import type { ClientValidationRecord } from "./client-validations.js";
import { parseRecordJson, validated } from "./records.js";

/**
 * Certificate records (schema version 2): one per `kubernetes.io/tls` Secret a Gateway listener of the
 * cluster references, in the cluster's `certificates` hash (keys.ts) under the Secret's `namespace/name`.
 * The certificate chain is public and stored as PEM; the private key is sealed with AES-256-GCM under
 * TLS_STORE_KEY (certificate-seal.ts), bound to its cluster and id, so no key sits in Redis in plaintext
 * (docs/design.md, store rule 7). Workers never read them: Cloudflare terminates TLS.
 */
export const CERTIFICATE_SCHEMA_VERSION = 2;

/** Names one certificate may be chosen for: the listener hostnames that reference it, else its SANs. */
export const MAX_CERTIFICATE_HOSTNAMES = 1_000;
/** A chain and a key are a few KiB; this bounds what a router decrypts and parses per record. */
export const MAX_CERTIFICATE_PEM = 64 * 1024;

export const CertificateIdSchema = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/, "id must be namespace/name"),
  v.maxLength(317),
);

/** A lower-case DNS name or `*.` and one: the names an SNI or a Host is matched against. */
export const CertificateHostnameSchema = v.pipe(
  v.string(),
  v.maxLength(253),
  v.regex(/^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, "host name"),
);

const Base64Schema = v.pipe(v.string(), v.regex(/^[A-Za-z0-9+/]*={0,2}$/, "base64"));

/**
 * AES-256-GCM output: which TLS_STORE_KEY sealed it (`kid`, a one-way fingerprint of the key, so a router
 * holding another key says so, and a sync given a new key rewrites every record), a 12-byte nonce, the
 * 16-byte tag, and the ciphertext, each base64.
 */
export const SealedSchema = v.object({
  alg: v.literal("A256GCM"),
  kid: v.pipe(v.string(), v.regex(/^[0-9a-f]{16}$/, "16 hex digits")),
  iv: v.pipe(Base64Schema, v.length(16)),
  tag: v.pipe(Base64Schema, v.length(24)),
  data: v.pipe(Base64Schema, v.maxLength(MAX_CERTIFICATE_PEM * 2)),
});
export type Sealed = v.InferOutput<typeof SealedSchema>;

export const CertificateRecordSchema = v.object({
  v: v.literal(CERTIFICATE_SCHEMA_VERSION),
  id: CertificateIdSchema,
  /** Lower-case; `*.` wildcards rank below exact names (functions/node/tls/certificate-table.ts). */
  hostnames: v.pipe(v.array(CertificateHostnameSchema), v.maxLength(MAX_CERTIFICATE_HOSTNAMES)),
  /**
   * A listener without a hostname uses it: it is then also served to an SNI no name matches (or none), and
   * covers every Host, as that listener accepts every host. Absent is false.
   */
  anyHost: v.optional(v.boolean()),
  /** sha256 of the chain, hex: a new one on every renewal, so routers cache a TLS context per version. */
  version: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "sha256 hex")),
  /** The leaf first, then its intermediates (the Secret's tls.crt). */
  cert: v.pipe(v.string(), v.maxLength(MAX_CERTIFICATE_PEM), v.includes("-----BEGIN CERTIFICATE-----")),
  key: SealedSchema,
});
export type CertificateRecord = v.InferOutput<typeof CertificateRecordSchema>;

export function decodeCertificateRecord(raw: string): Result<CertificateRecord> {
  const parsed = parseRecordJson(raw);
  return parsed.ok ? validated(CertificateRecordSchema, parsed.value) : parsed;
}

/** Fixed field order, so equal records give equal strings. */
export function serializeCertificateRecord(record: CertificateRecord): string {
  const checked = validated(CertificateRecordSchema, record);
  if (!checked.ok) throw new Error(`invalid certificate record ${record.id}: ${checked.error}`);
  const { v: version, id, hostnames, anyHost, version: certVersion, cert, key } = checked.value;
  return JSON.stringify({
    v: version,
    id,
    hostnames,
    ...(anyHost ? { anyHost } : {}),
    version: certVersion,
    cert,
    key: { alg: key.alg, kid: key.kid, iv: key.iv, tag: key.tag, data: key.data },
  });
}

/**
 * What a sync compares to skip an unchanged write: the key is sealed with a fresh nonce each time, so the
 * stored strings of one certificate differ; its id, version, hostnames and sealing key do not.
 */
export function certificateIdentity(
  record: Pick<CertificateRecord, "id" | "version" | "hostnames" | "anyHost" | "key">,
): string {
  const names = `${record.hostnames.join(",")}${record.anyHost ? " *" : ""}`;
  return `${record.id} ${record.version} ${names} ${record.key.kid}`;
}

/** The sync side: one cluster's certificate records, each write atomic and fenced as the others (store.ts). */
export interface CertificateWriter {
  /** Replaces the record under its id and bumps the cluster's certificate version. */
  putCertificate(record: CertificateRecord): Promise<void>;
  /** Removes the record and bumps the version. */
  removeCertificate(id: string): Promise<void>;
  /** The `certificates` hash as stored: id → record JSON. */
  loadCertificates(): Promise<Map<string, string>>;
  /** Replaces a Gateway port's client validation record (client-validations.ts) and bumps the version. */
  putClientValidation(record: ClientValidationRecord): Promise<void>;
  /** Removes it and bumps the version. */
  removeClientValidation(id: string): Promise<void>;
  /** The `client-validations` hash as stored: id → record JSON. */
  loadClientValidations(): Promise<Map<string, string>>;
}

/** The router side: cheap version reads to poll, and a whole cluster's records when its version moved. */
export interface CertificateReader {
  /** Every cluster with certificate records, and a token that changes with each of its writes. */
  versions(): Promise<Map<string, string>>;
  /** One cluster's `certificates` hash: id → record JSON. */
  records(cluster: string): Promise<Map<string, string>>;
  /** One cluster's `client-validations` hash: id → record JSON (client-validations.ts). */
  clientValidations(cluster: string): Promise<Map<string, string>>;
}

const STORE_KEY_FORMAT = /^[A-Za-z0-9+/]{43}=$/;
const STORE_KEY_MESSAGE =
  "TLS_STORE_KEY must be 32 bytes in base64 (44 characters; make one with `openssl rand -base64 32`)";

/**
 * TLS_STORE_KEY as an environment variable: 32 bytes (AES-256) in base64, the same on every sync and router
 * of a store; blank or unset is undefined (no certificate is published or served). parseEnv turns a bad
 * value into a ConfigurationError naming the variable.
 */
export const TlsStoreKeyEnvSchema = v.pipe(
  optionalText,
  v.check((text) => text === undefined || STORE_KEY_FORMAT.test(text), STORE_KEY_MESSAGE),
  v.transform((text) =>
    text === undefined ? undefined : Uint8Array.from(atob(text), (c) => c.charCodeAt(0)),
  ),
);

/** The decoded TLS_STORE_KEY, or undefined when unset or blank; a ConfigurationError saying why otherwise. */
export function parseTlsStoreKey(raw: string | undefined): Uint8Array | undefined {
  const result = v.safeParse(TlsStoreKeyEnvSchema, raw);
  if (!result.success) throw new ConfigurationError(STORE_KEY_MESSAGE);
  return result.output;
}
