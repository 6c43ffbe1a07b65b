import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { parseAllDocuments } from "yaml";
import type { Logger } from "../../lib/logger.js";
import {
  endpointSliceProblems,
  type KubeEndpointSlice,
  type KubeService,
  namespaceOf,
  SERVICE_NAME_LABEL,
} from "../translate/kube-objects.js";
import { NO_ROUTE_OBJECTS, type RouteObjects } from "../translate/route-objects.js";
import type { ClusterCache } from "../translate/types.js";
import { isKind, KINDS } from "./kinds.js";
import { emptyManifestObjects, type ManifestObjects, readManifestObject } from "./manifest-kinds.js";

/** Something in the folder that was skipped: `file` relative to the folder, `path` inside the file. */
export interface ManifestProblem {
  readonly file: string;
  readonly path: string;
  readonly error: string;
}

export interface LoadedManifests extends ManifestObjects {
  readonly problems: ManifestProblem[];
}

const MANIFEST_EXTENSIONS = [".yaml", ".yml", ".json"];

/**
 * loadManifests for the CLI: each skipped object is logged as a warning; an unreadable folder is logged as an
 * error and gives undefined (the caller exits 1).
 */
export async function readManifestFolder(dir: string, logger: Logger): Promise<LoadedManifests | undefined> {
  let loaded: LoadedManifests;
  try {
    loaded = await loadManifests(dir);
  } catch (error) {
    logger.error("cannot read manifest folder", { dir, error });
    return undefined;
  }
  for (const problem of loaded.problems) logger.warn("skipped manifest", { ...problem });
  for (const slice of loaded.slices) {
    const problems = endpointSliceProblems(slice);
    if (problems.length > 0) {
      logger.warn("dropping endpoints of an EndpointSlice", {
        namespace: namespaceOf(slice),
        name: slice.metadata.name,
        problems,
      });
    }
  }
  return loaded;
}

/**
 * Reads every *.yaml, *.yml and *.json file under `dir` (recursively, in sorted path order): single objects,
 * multi-document YAML and `List` / `*List` objects with `items`. Services, EndpointSlices, the Gateway API's
 * GatewayClasses, Gateways, HTTPRoutes and ReferenceGrants, Namespaces, IngressClasses and Ingresses are read
 * (manifest-kinds.ts); other kinds are ignored. A file or document that does not parse, or an object that fails validation, becomes a problem
 * and is skipped; everything else still loads. A repeated (kind, namespace, name) keeps the first copy.
 * Throws only when `dir` itself cannot be read.
 */
export async function loadManifests(dir: string): Promise<LoadedManifests> {
  const loaded: Collected = { ...emptyManifestObjects(), problems: [] };
  const seen = new Map<string, string>();
  for (const file of await manifestFiles(dir)) {
    const name = relative(dir, file).split(sep).join("/");
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      loaded.problems.push({ file: name, path: "(file)", error: `cannot read: ${(error as Error).message}` });
      continue;
    }
    for (const document of documentsOf(name, text, loaded.problems)) {
      collect(document.value, document.path, name, loaded, seen);
    }
  }
  return loaded;
}

/** The folder's manifest files as absolute-or-given paths, sorted by their path relative to `dir`. */
async function manifestFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const pending = [dir];
  // Bounded walk: symlinked folders are not followed, so a link loop cannot keep it going.
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === undefined) break;
    const entries = await readdir(current, { withFileTypes: true });
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (MANIFEST_EXTENSIONS.some((extension) => entry.name.endsWith(extension))) {
        if (entry.isFile() || (entry.isSymbolicLink() && (await isFile(path)))) found.push(path);
      }
    }
  }
  const key = (path: string) => relative(dir, path).split(sep).join("/");
  return found.sort((left, right) => (key(left) < key(right) ? -1 : key(left) > key(right) ? 1 : 0));
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

interface Document {
  readonly value: unknown;
  readonly path: string;
}

/**
 * JSON files hold one document. YAML files may hold several, separated by `---`; each is parsed on its own so
 * a broken document costs only itself. Empty documents (a trailing `---`) are skipped.
 */
function documentsOf(file: string, text: string, problems: ManifestProblem[]): Document[] {
  if (file.endsWith(".json")) {
    try {
      return [{ value: JSON.parse(text), path: "(root)" }];
    } catch (error) {
      problems.push({ file, path: "(root)", error: `not JSON: ${(error as Error).message}` });
      return [];
    }
  }
  const parsed = parseAllDocuments(text);
  const documents = Array.isArray(parsed) ? parsed : [];
  const documentPath = (index: number) => (documents.length > 1 ? `documents[${index}]` : "(root)");
  const out: Document[] = [];
  for (const [index, document] of documents.entries()) {
    const firstError = document.errors[0];
    if (firstError !== undefined) {
      problems.push({ file, path: documentPath(index), error: `not YAML: ${firstError.message}` });
      continue;
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: 100 });
    } catch (error) {
      problems.push({ file, path: documentPath(index), error: `not YAML: ${(error as Error).message}` });
      continue;
    }
    if (value === null || value === undefined) continue;
    out.push({ value, path: documentPath(index) });
  }
  return out;
}

type Collected = ManifestObjects & { problems: ManifestProblem[] };

/** What a typed list (`ServiceList`) tells about its items, which the API server sends without kind. */
interface ItemDefaults {
  readonly kind: string;
  readonly apiVersion: unknown;
}

function collect(
  value: unknown,
  path: string,
  file: string,
  loaded: Collected,
  seen: Map<string, string>,
  defaults?: ItemDefaults,
): void {
  const problem = (error: string) => loaded.problems.push({ file, path, error });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problem("not a Kubernetes object (expected a mapping with kind)");
    return;
  }
  const object = value as Record<string, unknown>;
  const kind = object.kind ?? defaults?.kind;
  const apiVersion = object.apiVersion ?? defaults?.apiVersion;
  if (typeof kind !== "string" || kind === "") {
    problem("has no kind");
    return;
  }
  if (kind.endsWith("List")) {
    if (!Array.isArray(object.items)) {
      problem(`${kind} has no items list`);
      return;
    }
    const prefix = path === "(root)" ? "" : `${path}.`;
    const itemKind = kind.slice(0, -"List".length);
    const itemDefaults = itemKind === "" ? undefined : { kind: itemKind, apiVersion };
    object.items.forEach((item, index) => {
      collect(item, `${prefix}items[${index}]`, file, loaded, seen, itemDefaults);
    });
    return;
  }
  if (!isKind(kind)) return;
  const { namespaced } = KINDS[kind];
  const manifestApiVersions: readonly string[] = KINDS[kind].manifestApiVersions;
  if (apiVersion !== undefined && !manifestApiVersions.includes(String(apiVersion))) {
    const expected = manifestApiVersions.join(" or ");
    problem(`${kind} apiVersion ${String(apiVersion)} is not supported (expected ${expected})`);
    return;
  }
  const metadata = (object.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const namespace = !namespaced
    ? ""
    : typeof metadata.namespace === "string"
      ? metadata.namespace
      : "default";
  const identity = `${kind} ${namespace}/${String(metadata.name)}`;
  const first = seen.get(identity);
  if (first !== undefined) {
    problem(`duplicate ${identity}, first defined in ${first}; this copy is skipped`);
    return;
  }
  const read = readManifestObject(kind, object, loaded);
  if (!read.ok) {
    problem(`invalid ${kind}: ${read.error}`);
    return;
  }
  seen.set(identity, `${file} at ${path}`);
}

/** The loaded objects behind the same read interface as the informer caches, for the reconciler and `--print`. */
export function cacheFromObjects(
  services: readonly KubeService[],
  slices: readonly KubeEndpointSlice[],
  routeObjects: RouteObjects = NO_ROUTE_OBJECTS,
): ClusterCache {
  const servicesById = new Map<string, KubeService>();
  for (const service of services)
    servicesById.set(`${namespaceOf(service)}/${service.metadata.name}`, service);
  const slicesByService = new Map<string, KubeEndpointSlice[]>();
  for (const slice of slices) {
    const serviceName = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    if (serviceName === undefined) continue;
    const id = `${namespaceOf(slice)}/${serviceName}`;
    const list = slicesByService.get(id) ?? [];
    list.push(slice);
    slicesByService.set(id, list);
  }
  const serviceList = [...servicesById.values()];
  return {
    services: () => serviceList,
    service: (namespace, name) => servicesById.get(`${namespace}/${name}`),
    slicesOf: (namespace, serviceName) => slicesByService.get(`${namespace}/${serviceName}`) ?? [],
    routeObjects: () => routeObjects,
  };
}
