import { createHash, X509Certificate } from "node:crypto";
import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { ObjectMetaSchema, parseWith } from "./gateway/objects.js";

/**
 * ConfigMaps as the sync keeps them: only the ones holding a `ca.crt` key (a CA certificate bundle, the
 * Gateway API's "Core" way to reference CA certificates: FrontendTLSValidation.caCertificateRefs and
 * BackendTLSPolicy's), cut down to their name and that key. Every other ConfigMap is ignored as it arrives
 * (kinds.ts `relevant`), so the cluster's many ConfigMaps cost neither memory nor recomputation.
 */
export const CA_BUNDLE_KEY = "ca.crt";

const ConfigMapSchema = v.looseObject({
  metadata: ObjectMetaSchema,
  data: v.nullish(v.record(v.string(), v.string())),
});

/** A ConfigMap as cached: its name and `ca.crt` only. */
export interface KubeConfigMap {
  readonly metadata: { readonly name: string; readonly namespace?: string | null | undefined };
  readonly data: { readonly [CA_BUNDLE_KEY]?: string };
}

export function parseConfigMap(input: unknown): Result<KubeConfigMap> {
  const parsed = parseWith(ConfigMapSchema, input);
  if (!parsed.ok) return parsed;
  const { name, namespace } = parsed.value.metadata;
  const bundle = parsed.value.data?.[CA_BUNDLE_KEY];
  return {
    ok: true,
    value: {
      metadata: { name, ...(namespace ? { namespace } : {}) },
      data: bundle === undefined ? {} : { [CA_BUNDLE_KEY]: bundle },
    },
  };
}

/** Whether the sync keeps this ConfigMap at all: it holds `ca.crt`. */
export function holdsCaBundle(raw: unknown): boolean {
  const data = (raw as { data?: unknown } | null | undefined)?.data;
  return typeof data === "object" && data !== null && CA_BUNDLE_KEY in data;
}

/** A usable CA bundle: its certificates as PEM, how many, and the sha256 of the PEM. */
export interface CaBundle {
  readonly pem: string;
  readonly certificates: number;
  readonly version: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The CA certificates of a ConfigMap's `ca.crt`, or why there are none usable (the message of an
 * InvalidCACertificateRef condition): at least one PEM certificate, every one of them parsed by node:crypto
 * (RFC 5280; nothing is fetched, nor checked against time, as a CA's own validity is the verifier's).
 */
export function caBundleOf(configMap: KubeConfigMap): Result<CaBundle> {
  const text = configMap.data[CA_BUNDLE_KEY];
  if (text === undefined) return { ok: false, error: `ConfigMap has no ${CA_BUNDLE_KEY} key` };
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return { ok: false, error: `${CA_BUNDLE_KEY} holds no PEM certificate` };
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      return { ok: false, error: `${CA_BUNDLE_KEY} holds a certificate that does not parse` };
    }
  }
  const pem = `${blocks.join("\n")}\n`;
  return {
    ok: true,
    value: { pem, certificates: blocks.length, version: createHash("sha256").update(pem).digest("hex") },
  };
}
