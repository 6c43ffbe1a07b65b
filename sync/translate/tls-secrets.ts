import { createHash, createPrivateKey, X509Certificate } from "node:crypto";
import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { ObjectMetaSchema, parseWith } from "./gateway/objects.js";

/**
 * Secrets as the sync reads them: only those of type `kubernetes.io/tls` from the API server (a field
 * selector, kinds.ts), any type from a manifest folder, where a wrong type must become a listener condition
 * rather than a parse failure. `data` values are base64, as the API serves them; `stringData` is a write-only
 * convenience of the API server, so a manifest's is read too (kubectl would merge it into data).
 */
export const SecretSchema = v.looseObject({
  metadata: ObjectMetaSchema,
  type: v.nullish(v.string()),
  data: v.nullish(v.record(v.string(), v.string())),
  stringData: v.nullish(v.record(v.string(), v.string())),
});
export type KubeSecret = v.InferOutput<typeof SecretSchema>;

export const parseSecret = (input: unknown) => parseWith(SecretSchema, input);

export const TLS_SECRET_TYPE = "kubernetes.io/tls";

/** A usable certificate of a Secret: the chain and key as PEM, the leaf's DNS names, and its version. */
export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
  /** The leaf's DNS subjectAltNames, lower-case (its CN when it has none, as older clients accept). */
  readonly names: readonly string[];
  /** sha256 of the chain, hex. */
  readonly version: string;
}

/**
 * The Secret's certificate, or why it cannot serve (the message of an InvalidCertificateRef condition): the
 * type is `kubernetes.io/tls`, tls.crt holds at least one PEM certificate and tls.key a private key that
 * matches the leaf (RFC 5280 certificates parsed by node:crypto; nothing is fetched or checked against time).
 */
export function tlsMaterialOf(secret: KubeSecret): Result<TlsMaterial> {
  const type = secret.type ?? "Opaque";
  if (type !== TLS_SECRET_TYPE) return { ok: false, error: `Secret type is ${type}, not ${TLS_SECRET_TYPE}` };
  const cert = field(secret, "tls.crt");
  const key = field(secret, "tls.key");
  if (cert === undefined || key === undefined) return { ok: false, error: "Secret lacks tls.crt or tls.key" };
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch {
    return { ok: false, error: "tls.crt is not a PEM certificate" };
  }
  try {
    if (!leaf.checkPrivateKey(createPrivateKey(key))) {
      return { ok: false, error: "tls.key does not match the certificate in tls.crt" };
    }
  } catch {
    return { ok: false, error: "tls.key is not a PEM private key" };
  }
  return {
    ok: true,
    value: { cert, key, names: namesOf(leaf), version: createHash("sha256").update(cert).digest("hex") },
  };
}

function field(secret: KubeSecret, name: string): string | undefined {
  const text = secret.stringData?.[name];
  if (text !== undefined) return text;
  const data = secret.data?.[name];
  if (data === undefined) return undefined;
  return Buffer.from(data, "base64").toString("utf8");
}

/** DNS names of the leaf: `DNS:` entries of subjectAltName, else the subject's CN. */
function namesOf(leaf: X509Certificate): string[] {
  const names = (leaf.subjectAltName ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith("DNS:"))
    .map((entry) => entry.slice(4).toLowerCase());
  if (names.length > 0) return [...new Set(names)];
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(leaf.subject)?.[1];
  return cn ? [cn.toLowerCase()] : [];
}
