import { MAX_CA_BUNDLE_PEM, type SubjectAltName, type Trust } from "../../../store/backend-tls.js";
import { caBundleOf, type KubeConfigMap } from "../ca-bundles.js";
import type { BackendTLSPolicy } from "./backend-tls-objects.js";
import { namespaceOf } from "./objects.js";

/** A policy's validation, or why it cannot be in force: an Accepted=False reason and message. */
export type ValidationOutcome =
  | { readonly ok: true; readonly validation: PolicyValidation; readonly refs: RefsOutcome }
  | {
      readonly ok: false;
      readonly reason: "Invalid" | "NoValidCACertificate";
      readonly message: string;
      readonly refs: RefsOutcome;
    };

export interface PolicyValidation {
  readonly hostname: string;
  readonly subjectAltNames: readonly SubjectAltName[];
  readonly trust: Trust;
}

/** What the caCertificateRefs resolved to: ResolvedRefs=True, or its False reason and message. */
export type RefsOutcome =
  | { readonly resolved: true }
  | {
      readonly resolved: false;
      readonly reason: "InvalidCACertificateRef" | "InvalidKind";
      readonly message: string;
    };

const PRECISE_HOSTNAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const SAN_HOSTNAME = /^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const ABSOLUTE_URI = /^[a-z][a-z0-9+.-]*:[^\s]+$/i;

/**
 * BackendTLSPolicy.spec.validation → what a router verifies (Gateway API v1 BackendTLSPolicyValidation):
 * `hostname` is the SNI and the name checked unless `subjectAltNames` are given; the roots are the ConfigMaps'
 * `ca.crt` bundles of caCertificateRefs (in the policy's namespace; another kind is InvalidKind, a missing or
 * malformed one InvalidCACertificateRef; every one invalid is NoValidCACertificate), or the system's for
 * `wellKnownCACertificates: System`. Any other well-known set, both or neither of the two, or a name the API
 * would refuse, is Accepted=False/Invalid.
 */
export function validationOf(
  policy: BackendTLSPolicy,
  configMaps: ReadonlyMap<string, KubeConfigMap>,
): ValidationOutcome {
  const spec = policy.spec.validation;
  const refs = spec.caCertificateRefs ?? [];
  const wellKnown = spec.wellKnownCACertificates ?? "";
  const resolved = resolveCaRefs(namespaceOf(policy), refs, configMaps);
  const invalid = (message: string): ValidationOutcome => ({
    ok: false,
    reason: "Invalid",
    message,
    refs: resolved.refs,
  });
  if (refs.length > 0 && wellKnown !== "")
    return invalid("caCertificateRefs and wellKnownCACertificates are both set");
  if (refs.length === 0 && wellKnown === "")
    return invalid("neither caCertificateRefs nor wellKnownCACertificates is set");
  if (wellKnown !== "" && wellKnown !== "System") {
    return invalid(`wellKnownCACertificates ${wellKnown} is not supported (only System)`);
  }
  const hostname = spec.hostname.toLowerCase();
  if (!PRECISE_HOSTNAME.test(hostname) || hostname.length > 253)
    return invalid(`hostname ${spec.hostname} is not a precise DNS name`);
  const names = subjectAltNamesOf(spec.subjectAltNames ?? []);
  if (typeof names === "string") return invalid(names);
  if (wellKnown === "System") {
    return {
      ok: true,
      validation: { hostname, subjectAltNames: names, trust: { system: true } },
      refs: resolved.refs,
    };
  }
  if (resolved.pem === "") {
    return {
      ok: false,
      reason: "NoValidCACertificate",
      message: "no caCertificateRef is valid",
      refs: resolved.refs,
    };
  }
  return {
    ok: true,
    validation: { hostname, subjectAltNames: names, trust: { pem: resolved.pem } },
    refs: resolved.refs,
  };
}

function subjectAltNamesOf(
  raw: NonNullable<BackendTLSPolicy["spec"]["validation"]["subjectAltNames"]>,
): SubjectAltName[] | string {
  if (raw.length > 5) return "more than 5 subjectAltNames";
  const names: SubjectAltName[] = [];
  for (const entry of raw) {
    if (entry.type === "Hostname") {
      const hostname = (entry.hostname ?? "").toLowerCase();
      if (!SAN_HOSTNAME.test(hostname))
        return `subjectAltName hostname ${entry.hostname ?? ""} is not a DNS name`;
      names.push({ type: "Hostname", hostname });
    } else if (entry.type === "URI") {
      const uri = entry.uri ?? "";
      if (!ABSOLUTE_URI.test(uri) || uri.length > 2_048)
        return `subjectAltName uri ${uri} is not an absolute URI`;
      names.push({ type: "URI", uri });
    } else {
      return `subjectAltName type ${entry.type} is not Hostname or URI`;
    }
  }
  return names;
}

/** The valid bundles joined, and whether every ref resolved (else the first problem, InvalidKind first). */
function resolveCaRefs(
  namespace: string,
  refs: NonNullable<BackendTLSPolicy["spec"]["validation"]["caCertificateRefs"]>,
  configMaps: ReadonlyMap<string, KubeConfigMap>,
): { pem: string; refs: RefsOutcome } {
  const bundles: string[] = [];
  let invalidKind: string | undefined;
  let invalidRef: string | undefined;
  for (const ref of refs) {
    const group = ref.group ?? "";
    const kind = ref.kind ?? "";
    if (group !== "" || kind !== "ConfigMap") {
      invalidKind ??= `caCertificateRef ${group === "" ? "core" : group}/${kind} ${ref.name} is not a ConfigMap`;
      continue;
    }
    const configMap = configMaps.get(`${namespace}/${ref.name}`);
    const bundle = configMap === undefined ? undefined : checkedBundle(configMap);
    // The sync keeps no ConfigMap without `ca.crt` (ca-bundles.ts): such a one reads as missing.
    if (bundle === undefined)
      invalidRef ??= `ConfigMap ${namespace}/${ref.name} does not exist or has no ca.crt`;
    else if (!bundle.ok) invalidRef ??= `ConfigMap ${namespace}/${ref.name}: ${bundle.error}`;
    else bundles.push(bundle.value.pem);
  }
  const pem = bundles.join("");
  const problem =
    invalidKind !== undefined
      ? ({ resolved: false, reason: "InvalidKind", message: invalidKind } as const)
      : invalidRef !== undefined
        ? ({ resolved: false, reason: "InvalidCACertificateRef", message: invalidRef } as const)
        : ({ resolved: true } as const);
  if (pem.length > MAX_CA_BUNDLE_PEM) {
    return {
      pem: "",
      refs: {
        resolved: false,
        reason: "InvalidCACertificateRef",
        message: "the CA bundles are larger than 256 KiB",
      },
    };
  }
  return { pem, refs: problem };
}

/** Each checked bundle once: the cache hands the same ConfigMap object until it changes. */
const checkedBundles = new WeakMap<KubeConfigMap, ReturnType<typeof caBundleOf>>();

function checkedBundle(configMap: KubeConfigMap): ReturnType<typeof caBundleOf> {
  let result = checkedBundles.get(configMap);
  if (result === undefined) {
    result = caBundleOf(configMap);
    checkedBundles.set(configMap, result);
  }
  return result;
}
