import type { KubeConfig as KubeConfigClass } from "@kubernetes/client-node";

/**
 * What the built sync imports instead of @kubernetes/client-node (scripts/build.mjs): the one class it uses,
 * KubeConfig, bundled, tree-shaken and minified at the top of dist/sync.bundle.js under this name. Never
 * imported by the sources; the build resolves `@kubernetes/client-node` here.
 */
declare const __edgesliceKubeVendor: { readonly KubeConfig: typeof KubeConfigClass };

export const KubeConfig = __edgesliceKubeVendor.KubeConfig;
