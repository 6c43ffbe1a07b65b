import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { parse, parseAllDocuments } from "yaml";

const run = promisify(execFile);
export const ROOT = new URL("../../../", import.meta.url).pathname;
export const DEPLOY = join(ROOT, "deploy");

/** A Kubernetes object as rendered; fields are read through the small accessors below. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Labels };
  readonly [field: string]: unknown;
}

export type Labels = Readonly<Record<string, string>>;

export interface Probe {
  readonly httpGet?: { readonly path: string; readonly port: string | number };
  readonly periodSeconds?: number;
  readonly failureThreshold?: number;
}

export interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly secretKeyRef?: { readonly name: string; readonly key: string } };
}

export interface Container {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
  readonly env?: readonly EnvVar[];
  readonly ports?: readonly { readonly name?: string; readonly containerPort: number }[];
  readonly livenessProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly startupProbe?: Probe;
  readonly lifecycle?: { readonly preStop?: { readonly exec?: { readonly command: readonly string[] } } };
  readonly resources?: {
    readonly requests?: Readonly<Record<string, string>>;
    readonly limits?: Readonly<Record<string, string>>;
  };
  readonly securityContext?: Readonly<Record<string, unknown>>;
}

export interface PodSpec {
  readonly containers: readonly Container[];
  readonly serviceAccountName?: string;
  readonly terminationGracePeriodSeconds?: number;
  readonly securityContext?: Readonly<Record<string, unknown>>;
}

export interface Deployment extends KubeObject {
  readonly spec: {
    readonly selector: { readonly matchLabels: Labels };
    readonly template: { readonly metadata: { readonly labels: Labels }; readonly spec: PodSpec };
  };
}

/** Every folder under deploy/ with a kustomization.yaml that is not a Component, as `deploy/...` paths. */
export function kustomizations(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (entry === "kustomization.yaml" && parse(readFileSync(path, "utf8")).kind !== "Component") {
        found.push(relative(ROOT, dir));
      }
    }
  };
  walk(DEPLOY);
  return found.sort();
}

/** `kubectl kustomize <folder>` (a path from the repository root), parsed. */
export async function render(folder: string): Promise<KubeObject[]> {
  const { stdout } = await run("kubectl", ["kustomize", join(ROOT, folder)]);
  return parseYaml(stdout);
}

export function parseYaml(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((document) => document.toJSON() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null && typeof object.kind === "string");
}

/** Every `*.example.yaml` under deploy/: objects shown to operators but kept out of the kustomizations. */
export function examples(): { readonly file: string; readonly objects: KubeObject[] }[] {
  const found: { file: string; objects: KubeObject[] }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith(".example.yaml")) {
        found.push({ file: relative(ROOT, path), objects: parseYaml(readFileSync(path, "utf8")) });
      }
    }
  };
  walk(DEPLOY);
  return found.sort((a, b) => a.file.localeCompare(b.file));
}

export function ofKind<T extends KubeObject = KubeObject>(objects: readonly KubeObject[], kind: string): T[] {
  return objects.filter((object) => object.kind === kind) as T[];
}

export function only<T extends KubeObject = KubeObject>(objects: readonly KubeObject[], kind: string): T {
  const found = ofKind<T>(objects, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as T;
}

export function container(deployment: Deployment): Container {
  const [first, ...rest] = deployment.spec.template.spec.containers;
  if (!first || rest.length > 0) throw new Error(`${deployment.metadata.name}: expected one container`);
  return first;
}

export function envOf(deployment: Deployment): Map<string, EnvVar> {
  return new Map((container(deployment).env ?? []).map((variable) => [variable.name, variable]));
}

/** True when every label of `selector` is on `labels`. */
export function selects(selector: Labels, labels: Labels | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}
