import { parseAllDocuments } from "yaml";
import type { ApplyInput } from "../fake-kube/store.js";
import type { Manifests } from "./control-plane.js";

/** The objects of `input` (YAML or JSON text, one object or several, Lists opened), as `kubectl apply` reads them. */
export function manifestObjects(input: Manifests): ApplyInput[] {
  const documents: unknown[] =
    typeof input === "string"
      ? parseAllDocuments(input).map((document) => document.toJSON() as unknown)
      : Array.isArray(input)
        ? [...input]
        : [input];
  return documents.flatMap(opened);
}

function opened(document: unknown): ApplyInput[] {
  if (typeof document !== "object" || document === null) return [];
  const object = document as ApplyInput & { items?: unknown[] };
  if (String(object.kind).endsWith("List") && Array.isArray(object.items))
    return object.items.flatMap(opened);
  return [object];
}

/** `patch` merged into `target` as a JSON merge patch (RFC 7386): objects merge, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const merged: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = mergePatch(merged[key], value);
  }
  return merged;
}
