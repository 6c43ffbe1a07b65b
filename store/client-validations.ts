import * as v from "valibot";
import type { Result } from "../lib/result.js";
import { parseRecordJson, validated } from "./records.js";
import { HostPatternSchema } from "./routes.js";

/**
 * Client validation records (schema version 1): a Gateway's frontend client certificate validation
 * (Gateway.spec.tls.frontend, its default or its entry for one port) as the HTTPS listeners of that Gateway
 * and port need it: the listener hostnames it covers, the mode, and the CA bundle client certificates are
 * checked against. One per Gateway and port, in the cluster's `client-validations` hash (keys.ts) under
 * `namespace/name:port`, written by the certificate script, which bumps the cluster's certificate version, so
 * routers read them with the certificates. A CA bundle is public: nothing is sealed. Workers never read them:
 * Cloudflare ends TLS in front of a Worker.
 */
export const CLIENT_VALIDATION_SCHEMA_VERSION = 1;

/** Gateway API FrontendValidationModeType. */
export const CLIENT_VALIDATION_MODES = ["AllowValidOnly", "AllowInsecureFallback"] as const;
export type ClientValidationMode = (typeof CLIENT_VALIDATION_MODES)[number];

/** Listeners of one Gateway on one port: the API allows 64 per Gateway. */
export const MAX_VALIDATION_HOSTNAMES = 64;

/** A few CA certificates: far more than FrontendTLSValidation's 16 references would hold in practice. */
export const MAX_CA_BUNDLE_PEM = 256 * 1024;

const NAME = "[a-z0-9]([a-z0-9.-]*[a-z0-9])?";
const GatewayIdSchema = v.pipe(
  v.string(),
  v.maxLength(317),
  v.regex(new RegExp(`^${NAME}/${NAME}$`), "namespace/name"),
);
const PortSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));

export const ClientValidationRecordSchema = v.object({
  v: v.literal(CLIENT_VALIDATION_SCHEMA_VERSION),
  /** `namespace/name:port` of the Gateway and the listener port. */
  id: v.pipe(
    v.string(),
    v.maxLength(324),
    v.regex(new RegExp(`^${NAME}/${NAME}:[0-9]{1,5}$`), "namespace/name:port"),
  ),
  gateway: GatewayIdSchema,
  port: PortSchema,
  /** The hostnames of the Gateway's HTTPS listeners on the port, lower case, `*.` wildcards among them. */
  hostnames: v.pipe(v.array(HostPatternSchema), v.maxLength(MAX_VALIDATION_HOSTNAMES)),
  /** One of those listeners has no hostname: the validation covers every name on the port. Absent is false. */
  anyHost: v.optional(v.boolean()),
  mode: v.picklist(CLIENT_VALIDATION_MODES),
  /** The CA certificates, PEM: a client certificate must chain to one of them. */
  ca: v.pipe(v.string(), v.maxLength(MAX_CA_BUNDLE_PEM), v.includes("-----BEGIN CERTIFICATE-----")),
  /** sha256 of `ca`, hex: routers make a TLS context per (certificate, bundle) version. */
  version: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "sha256 hex")),
});
export type ClientValidationRecord = v.InferOutput<typeof ClientValidationRecordSchema>;

/** `namespace/name:port`: the record id of a Gateway's validation on one listener port. */
export function clientValidationId(gateway: string, port: number): string {
  return `${gateway}:${port}`;
}

export function decodeClientValidationRecord(raw: string): Result<ClientValidationRecord> {
  const parsed = parseRecordJson(raw);
  return parsed.ok ? validated(ClientValidationRecordSchema, parsed.value) : parsed;
}

/** Fixed field order, so equal records give equal strings (the sync compares them to skip writes). */
export function serializeClientValidationRecord(record: ClientValidationRecord): string {
  const checked = validated(ClientValidationRecordSchema, record);
  if (!checked.ok) throw new Error(`invalid client validation record ${record.id}: ${checked.error}`);
  const { v: schema, id, gateway, port, hostnames, anyHost, mode, ca, version } = checked.value;
  return JSON.stringify({
    v: schema,
    id,
    gateway,
    port,
    hostnames,
    ...(anyHost ? { anyHost } : {}),
    mode,
    ca,
    version,
  });
}
