import { byCodeUnits } from "../../../lib/code-unit-order.js";
import type { Result } from "../../../lib/result.js";
import type { KubeSecret, TlsMaterial } from "../tls-secrets.js";
import { referenceGranted } from "./backends.js";
import { hostnamesThroughListener } from "./hostnames.js";
import { GATEWAY_GROUP, type ReferenceGrant } from "./objects.js";

/** One entry of a listener's `tls.certificateRefs` (SecretObjectReference: group "" and kind Secret by default). */
export interface CertificateRef {
  readonly group?: string | null | undefined;
  readonly kind?: string | null | undefined;
  readonly name: string;
  readonly namespace?: string | null | undefined;
}

/** What a listener's certificateRefs resolve to: the usable Secrets (`ns/name`), and the first problem. */
export interface ListenerCertificates {
  readonly secrets: readonly string[];
  readonly problem:
    | { readonly reason: "InvalidCertificateRef" | "RefNotPermitted"; readonly message: string }
    | undefined;
}

/** The cluster's TLS Secrets by `ns/name`, the ReferenceGrants, and each Secret's certificate (memoised). */
export interface CertificateContext {
  readonly secrets: ReadonlyMap<string, KubeSecret>;
  readonly grants: readonly ReferenceGrant[];
  readonly material: (id: string, secret: KubeSecret) => Result<TlsMaterial>;
}

/**
 * Gateway API ListenerConditionReason for ResolvedRefs: a reference to another namespace that no
 * ReferenceGrant allows is RefNotPermitted, whether or not the Secret exists; an allowed reference of another
 * group or kind, to a Secret that does not exist, or whose data is not a matching certificate and key, is
 * InvalidCertificateRef. RefNotPermitted wins when both occur (InvalidCertificateRef "must be used only when
 * the reference is allowed"). Valid references still serve beside invalid ones.
 */
export function resolveCertificateRefs(
  gatewayNamespace: string,
  refs: readonly CertificateRef[],
  context: CertificateContext,
): ListenerCertificates {
  const secrets: string[] = [];
  let notPermitted: string | undefined;
  let invalid: string | undefined;
  for (const ref of refs) {
    const group = ref.group ?? "";
    const kind = ref.kind ?? "Secret";
    const namespace = ref.namespace ?? gatewayNamespace;
    const id = `${namespace}/${ref.name}`;
    if (group !== "" || kind !== "Secret") {
      invalid ??= `certificateRef ${group === "" ? "core" : group}/${kind} ${id} is not a core Secret`;
      continue;
    }
    if (
      namespace !== gatewayNamespace &&
      !referenceGranted(
        context.grants,
        { group: GATEWAY_GROUP, kind: "Gateway", namespace: gatewayNamespace },
        { group: "", kind: "Secret", namespace, name: ref.name },
      )
    ) {
      notPermitted ??= `no ReferenceGrant in ${namespace} allows Gateways of ${gatewayNamespace} to use Secret ${id}`;
      continue;
    }
    const secret = context.secrets.get(id);
    if (secret === undefined) {
      invalid ??= `Secret ${id} does not exist (or is not of type kubernetes.io/tls)`;
      continue;
    }
    const material = context.material(id, secret);
    if (!material.ok) {
      invalid ??= `Secret ${id}: ${material.error}`;
      continue;
    }
    secrets.push(id);
  }
  const problem =
    notPermitted !== undefined
      ? { reason: "RefNotPermitted" as const, message: notPermitted }
      : invalid !== undefined
        ? { reason: "InvalidCertificateRef" as const, message: invalid }
        : undefined;
  return { secrets, problem };
}

/** One certificate to publish: the Secret, the names it is chosen for, and its material. */
export interface CertificateUse {
  readonly id: string;
  /** Sorted, lower-case: each listener's hostname that references it, or the certificate's names when one has none. */
  readonly hostnames: readonly string[];
  /** A listener without a hostname uses it: it is the default for any other SNI, and covers every Host. */
  readonly anyHost: boolean;
  readonly material: TlsMaterial;
}

/** What the store takes as a host name (store/certificates.ts CertificateHostnameSchema). */
const HOSTNAME = /^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The certificates the serving listeners of our Gateways use, one per Secret, each chosen for its DNS names
 * as far as its listener's hostname reaches (certificateNames); a listener without hostname also makes it the
 * certificate for any SNI no other name matches (that listener accepts every host). Names the store cannot
 * hold (an IP SAN, `_`) are left out.
 */
export function certificateUses(
  listeners: Iterable<{ readonly hostname: string | undefined; readonly certificates: readonly string[] }>,
  context: CertificateContext,
): CertificateUse[] {
  const names = new Map<string, { hostnames: Set<string>; anyHost: boolean; material: TlsMaterial }>();
  for (const listener of listeners) {
    for (const id of listener.certificates) {
      const secret = context.secrets.get(id);
      const material = secret && context.material(id, secret);
      if (!material?.ok) continue;
      const entry = names.get(id) ?? {
        hostnames: new Set<string>(),
        anyHost: false,
        material: material.value,
      };
      if (!listener.hostname) entry.anyHost = true;
      for (const name of certificateNames(listener.hostname, material.value.names)) {
        if (HOSTNAME.test(name)) entry.hostnames.add(name);
      }
      names.set(id, entry);
    }
  }
  return [...names]
    .filter(([, entry]) => entry.hostnames.size > 0 || entry.anyHost)
    .sort(([a], [b]) => byCodeUnits(a, b))
    .map(([id, entry]) => ({
      id,
      hostnames: [...entry.hostnames].sort(),
      anyHost: entry.anyHost,
      material: entry.material,
    }));
}

/**
 * The names a certificate is chosen for through one listener: each of its DNS names intersected with the
 * listener's hostname (the more specific of the two, as routes' hostnames are), so one listener with several
 * certificates picks the longest match per SNI. A certificate none of whose names meets the listener's
 * hostname still serves that hostname: a wrong certificate a client can see beats a failed handshake.
 */
export function certificateNames(listenerHostname: string | undefined, names: readonly string[]): string[] {
  const through = hostnamesThroughListener(listenerHostname, names);
  if (through === "any") return [];
  if (through.length === 0 && listenerHostname) return [listenerHostname];
  return [...through];
}
