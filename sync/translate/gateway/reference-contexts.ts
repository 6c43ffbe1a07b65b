import type { Result } from "../../../lib/result.js";
import { type CaBundle, caBundleOf, type KubeConfigMap } from "../ca-bundles.js";
import { type KubeSecret, type TlsMaterial, tlsMaterialOf } from "../tls-secrets.js";
import type { CertificateContext } from "./certificate-refs.js";
import type { CaBundleContext } from "./frontend-validation.js";
import { keyOf, type ReferenceGrant } from "./objects.js";

/*
 * What listeners' references to Secrets and ConfigMaps resolve against: the objects by `ns/name`, the
 * ReferenceGrants, and what each object holds, checked once per object.
 */

/** Each ConfigMap object's CA bundle, checked once: the cache hands the same object until it changes. */
const checkedBundles = new WeakMap<KubeConfigMap, Result<CaBundle>>();

export function caBundleContextOf(
  configMaps: readonly KubeConfigMap[],
  grants: readonly ReferenceGrant[],
): CaBundleContext {
  return {
    configMaps: new Map(configMaps.map((configMap) => [keyOf(configMap), configMap])),
    grants,
    bundle: (configMap) => {
      let result = checkedBundles.get(configMap);
      if (result === undefined) {
        result = caBundleOf(configMap);
        checkedBundles.set(configMap, result);
      }
      return result;
    },
  };
}

/** Each Secret object's certificate, checked once: the cache hands the same object until it changes. */
const checkedMaterials = new WeakMap<KubeSecret, Result<TlsMaterial>>();

/** The Secrets by id, and the certificate of each. */
export function certificateContextOf(
  secrets: readonly KubeSecret[],
  grants: readonly ReferenceGrant[],
): CertificateContext {
  return {
    secrets: new Map(secrets.map((secret) => [keyOf(secret), secret])),
    grants,
    material: (_id, secret) => {
      let result = checkedMaterials.get(secret);
      if (result === undefined) {
        result = tlsMaterialOf(secret);
        checkedMaterials.set(secret, result);
      }
      return result;
    },
  };
}
