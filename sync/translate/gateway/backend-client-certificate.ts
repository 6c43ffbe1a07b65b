import * as v from "valibot";
import type { TlsMaterial } from "../tls-secrets.js";
import { type CertificateContext, resolveCertificateRefs } from "./certificate-refs.js";
import { type Condition, condition } from "./conditions.js";
import { type Gateway, keyOf, namespaceOf } from "./objects.js";

/**
 * Gateway.spec.tls.backend.clientCertificateRef (gateway.networking.k8s.io/v1): the certificate the Gateway
 * presents to backends it opens TLS to (a BackendTLSPolicy's). Read loosely: a value this version does not know
 * becomes a condition, never a parse failure of the Gateway.
 */
const RefSchema = v.looseObject({
  group: v.nullish(v.string()),
  kind: v.nullish(v.string()),
  name: v.string(),
  namespace: v.nullish(v.string()),
});
const GatewayTlsSchema = v.looseObject({
  backend: v.nullish(v.looseObject({ clientCertificateRef: v.nullish(RefSchema) })),
});

/** A Gateway's usable backend client certificate: its Secret's certificate and key. */
export interface BackendClientCertificateUse {
  /** The Gateway, `namespace/name`. */
  readonly gateway: string;
  /** The Secret, `namespace/name`. */
  readonly secret: string;
  readonly material: TlsMaterial;
}

/**
 * The Gateway's ResolvedRefs condition for its backend client certificate, and the certificate when usable
 * (GatewayConditionReason): a reference to another namespace that no ReferenceGrant allows is RefNotPermitted;
 * another group or kind, a Secret that does not exist or holds no matching certificate and key is
 * InvalidClientCertificateRef. Undefined for a Gateway without one. The Gateway stays Accepted either way.
 */
export function backendClientCertificateOf(
  gateway: Gateway,
  context: CertificateContext,
): { readonly condition: Condition; readonly use: BackendClientCertificateUse | undefined } | undefined {
  const parsed = v.safeParse(GatewayTlsSchema, gateway.spec.tls ?? {});
  const ref = parsed.success ? parsed.output.backend?.clientCertificateRef : undefined;
  if (!ref) return undefined;
  const generation = gateway.metadata.generation;
  const resolved = resolveCertificateRefs(namespaceOf(gateway), [ref], context);
  const secret = resolved.secrets[0];
  if (resolved.problem || secret === undefined) {
    const reason =
      resolved.problem?.reason === "RefNotPermitted" ? "RefNotPermitted" : "InvalidClientCertificateRef";
    const message = `backend clientCertificateRef: ${resolved.problem?.message ?? "not usable"}`;
    return { condition: condition("ResolvedRefs", false, reason, message, generation), use: undefined };
  }
  const found = context.secrets.get(secret);
  const material = found && context.material(secret, found);
  if (!material?.ok) {
    const message = `backend clientCertificateRef: Secret ${secret} holds no certificate and key`;
    return {
      condition: condition("ResolvedRefs", false, "InvalidClientCertificateRef", message, generation),
      use: undefined,
    };
  }
  return {
    condition: condition(
      "ResolvedRefs",
      true,
      "ResolvedRefs",
      "backend client certificate resolved",
      generation,
    ),
    use: { gateway: keyOf(gateway), secret, material: material.value },
  };
}
