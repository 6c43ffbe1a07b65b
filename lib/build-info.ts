import manifest from "../package.json" with { type: "json" };
import type { MetricFamily } from "./prometheus.js";

/** Which edgeslice this is: what `--version` prints and `edgeslice_build_info` carries. */
export interface BuildInfo {
  /** package.json's version. */
  readonly version: string;
  /** The git commit it was built from; `unknown` when run from sources or built without one. */
  readonly revision: string;
  /** The Node.js version it runs on (`v24.11.0`); empty where there is no Node (Workers without it). */
  readonly node: string;
}

// esbuild replaces this name with the commit the bundles are built from (scripts/build.mjs); from sources
// (tsx) it is not defined at all, which `typeof` reads without throwing.
declare const EDGESLICE_REVISION: string | undefined;

export const BUILD_INFO: BuildInfo = {
  version: manifest.version,
  revision:
    typeof EDGESLICE_REVISION === "string" && EDGESLICE_REVISION !== "" ? EDGESLICE_REVISION : "unknown",
  node: globalThis.process?.version ?? "",
};

/** The line `--version` prints: `edgeslice 0.1.0 (revision 1a2b3c..., Node.js v24.11.0)`. */
export function versionLine(info: BuildInfo = BUILD_INFO): string {
  return `edgeslice ${info.version} (revision ${info.revision}, Node.js ${info.node || "none"})`;
}

/** `edgeslice_build_info{version,revision,node} 1`, as Prometheus exporters state their build. */
export function buildInfoFamily(info: BuildInfo = BUILD_INFO): MetricFamily {
  return {
    name: "edgeslice_build_info",
    type: "gauge",
    help: "Always 1, labelled with the edgeslice version, the git revision it was built from and the Node.js version.",
    samples: [{ labels: { version: info.version, revision: info.revision, node: info.node }, value: 1 }],
  };
}
