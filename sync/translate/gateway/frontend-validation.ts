import { createHash } from "node:crypto";
import * as v from "valibot";
import type { Result } from "../../../lib/result.js";
import type { ClientValidationMode } from "../../../store/client-validations.js";
import type { CaBundle, KubeConfigMap } from "../ca-bundles.js";
import { referenceGranted } from "./backends.js";
import { GATEWAY_GROUP, type Gateway, keyOf, namespaceOf, type ReferenceGrant } from "./objects.js";

/**
 * Gateway.spec.tls.frontend (gateway.networking.k8s.io/v1, standard channel): client certificate validation
 * for the Gateway's HTTPS listeners, its `default` for every port unless `perPort` has an entry for the
 * listener's port. Read here loosely: a value this version does not know becomes a condition, never a parse
 * failure of the Gateway.
 */
const RefSchema = v.looseObject({
  group: v.nullish(v.string()),
  kind: v.nullish(v.string()),
  name: v.string(),
  namespace: v.nullish(v.string()),
});
const ValidationSchema = v.looseObject({
  caCertificateRefs: v.nullish(v.array(RefSchema)),
  mode: v.nullish(v.string()),
});
const TlsConfigSchema = v.looseObject({ validation: v.nullish(ValidationSchema) });
const FrontendSchema = v.looseObject({
  default: v.nullish(TlsConfigSchema),
  perPort: v.nullish(v.array(v.looseObject({ port: v.number(), tls: v.nullish(TlsConfigSchema) }))),
});
const GatewayTlsSchema = v.looseObject({ frontend: v.nullish(FrontendSchema) });

type Validation = v.InferOutput<typeof ValidationSchema>;

/** Why a listener's client validation has a reference it cannot use (ListenerConditionReason for ResolvedRefs). */
export interface CaRefProblem {
  readonly reason: "RefNotPermitted" | "InvalidCACertificateKind" | "InvalidCACertificateRef";
  readonly message: string;
}

/** The client certificate validation one HTTPS listener port of a Gateway asks for. */
export interface FrontendValidation {
  readonly mode: ClientValidationMode;
  /** The usable CA certificates of every reference, undefined when none is usable (NoValidCACertificate). */
  readonly bundle: CaBundle | undefined;
  /** The first reference that cannot be used, if any: ResolvedRefs=False with its reason. */
  readonly problem: CaRefProblem | undefined;
}

/** The cluster's CA bundle ConfigMaps by `ns/name`, the ReferenceGrants, and each ConfigMap's bundle. */
export interface CaBundleContext {
  readonly configMaps: ReadonlyMap<string, KubeConfigMap>;
  readonly grants: readonly ReferenceGrant[];
  readonly bundle: (configMap: KubeConfigMap) => Result<CaBundle>;
}

function frontendOf(gateway: Gateway) {
  const parsed = v.safeParse(GatewayTlsSchema, gateway.spec.tls ?? {});
  return parsed.success ? parsed.output.frontend : undefined;
}

/** The validation of `port` as written: its perPort entry, else the default; undefined when none applies. */
function validationOf(gateway: Gateway, port: number): Validation | undefined {
  const frontend = frontendOf(gateway);
  const perPort = frontend?.perPort?.find((entry) => entry.port === port);
  return (perPort ? perPort.tls?.validation : frontend?.default?.validation) ?? undefined;
}

/**
 * Whether the Gateway lets some port accept clients without a valid certificate (Gateway condition
 * InsecureFrontendValidationMode, reason ConfigurationChanged, "true when the Gateway FrontendValidationModeType
 * is configured to allow insecure fallback behavior", at the Gateway level or per port).
 */
export function allowsInsecureFallback(gateway: Gateway): boolean {
  const frontend = frontendOf(gateway);
  const validations = [
    frontend?.default?.validation,
    ...(frontend?.perPort ?? []).map((entry) => entry.tls?.validation),
  ];
  return validations.some((validation) => validation?.mode === "AllowInsecureFallback");
}

/**
 * The client certificate validation of the Gateway's HTTPS listeners on `port`, references resolved as
 * FrontendTLSValidation.caCertificateRefs says: a core ConfigMap (the Core support; any other kind is
 * InvalidCACertificateKind), of the Gateway's namespace or of one whose ReferenceGrant allows Gateways of it
 * (else RefNotPermitted), holding a CA bundle in `ca.crt` (else InvalidCACertificateRef). The usable ones'
 * certificates together are the bundle. An unknown mode is AllowValidOnly: never weaker than written.
 */
export function frontendValidationOf(
  gateway: Gateway,
  port: number,
  context: CaBundleContext,
): FrontendValidation | undefined {
  const validation = validationOf(gateway, port);
  if (!validation) return undefined;
  const mode: ClientValidationMode =
    validation.mode === "AllowInsecureFallback" ? "AllowInsecureFallback" : "AllowValidOnly";
  const gatewayNamespace = namespaceOf(gateway);
  const bundles: CaBundle[] = [];
  let problem: CaRefProblem | undefined;
  for (const ref of validation.caCertificateRefs ?? []) {
    const resolved = resolveCaRef(ref, gatewayNamespace, context);
    if ("reason" in resolved) problem ??= resolved;
    else bundles.push(resolved);
  }
  if ((validation.caCertificateRefs ?? []).length === 0) {
    problem ??= {
      reason: "InvalidCACertificateRef",
      message: `Gateway ${keyOf(gateway)}: validation without caCertificateRefs`,
    };
  }
  return { mode, bundle: joined(bundles), problem };
}

function resolveCaRef(
  ref: v.InferOutput<typeof RefSchema>,
  gatewayNamespace: string,
  context: CaBundleContext,
): CaBundle | CaRefProblem {
  const group = ref.group ?? "";
  const kind = ref.kind ?? "ConfigMap";
  const namespace = ref.namespace ?? gatewayNamespace;
  const id = `${namespace}/${ref.name}`;
  if (group !== "" || kind !== "ConfigMap") {
    return {
      reason: "InvalidCACertificateKind",
      message: `caCertificateRef ${group === "" ? "core" : group}/${kind} ${id} is not a ConfigMap`,
    };
  }
  const granted =
    namespace === gatewayNamespace ||
    referenceGranted(
      context.grants,
      { group: GATEWAY_GROUP, kind: "Gateway", namespace: gatewayNamespace },
      { group: "", kind: "ConfigMap", namespace, name: ref.name },
    );
  if (!granted) {
    return {
      reason: "RefNotPermitted",
      message: `no ReferenceGrant in ${namespace} allows Gateways of ${gatewayNamespace} to use ConfigMap ${id}`,
    };
  }
  const configMap = context.configMaps.get(id);
  if (!configMap) {
    return {
      reason: "InvalidCACertificateRef",
      message: `ConfigMap ${id} does not exist (or holds no ca.crt)`,
    };
  }
  const bundle = context.bundle(configMap);
  return bundle.ok
    ? bundle.value
    : { reason: "InvalidCACertificateRef", message: `ConfigMap ${id}: ${bundle.error}` };
}

function joined(bundles: readonly CaBundle[]): CaBundle | undefined {
  const [first, ...rest] = bundles;
  if (!first || rest.length === 0) return first;
  const pem = bundles.map((bundle) => bundle.pem).join("");
  const certificates = bundles.reduce((sum, bundle) => sum + bundle.certificates, 0);
  return { pem, certificates, version: createHash("sha256").update(pem).digest("hex") };
}

/** One Gateway port's client validation to publish (store/client-validations.ts). */
export interface ClientValidationUse {
  /** `namespace/name` of the Gateway. */
  readonly gateway: string;
  readonly port: number;
  /** The hostnames of its validating HTTPS listeners on the port, sorted. */
  readonly hostnames: readonly string[];
  /** One of them has no hostname. */
  readonly anyHost: boolean;
  readonly mode: ClientValidationMode;
  readonly bundle: CaBundle;
}

/**
 * The client validations the serving HTTPS listeners of our Gateways ask for, one per Gateway and port (every
 * listener of a port shares the port's validation), in Gateway then port order.
 */
export function clientValidationUses(
  gateways: Iterable<{
    readonly key: string;
    readonly listeners: readonly {
      readonly port: number;
      readonly hostname: string | undefined;
      readonly validation: { readonly mode: ClientValidationMode; readonly bundle: CaBundle } | undefined;
    }[];
  }>,
): ClientValidationUse[] {
  const uses: ClientValidationUse[] = [];
  for (const gateway of gateways) {
    const byPort = new Map<
      number,
      { hostnames: Set<string>; anyHost: boolean; mode: ClientValidationMode; bundle: CaBundle }
    >();
    for (const listener of gateway.listeners) {
      if (!listener.validation) continue;
      const entry = byPort.get(listener.port) ?? {
        hostnames: new Set<string>(),
        anyHost: false,
        ...listener.validation,
      };
      if (listener.hostname) entry.hostnames.add(listener.hostname);
      else entry.anyHost = true;
      byPort.set(listener.port, entry);
    }
    for (const [port, entry] of [...byPort].sort(([a], [b]) => a - b)) {
      uses.push({
        gateway: gateway.key,
        port,
        hostnames: [...entry.hostnames].sort(),
        anyHost: entry.anyHost,
        mode: entry.mode,
        bundle: entry.bundle,
      });
    }
  }
  return uses;
}
