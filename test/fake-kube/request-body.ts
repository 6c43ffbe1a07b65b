import type { IncomingMessage, ServerResponse } from "node:http";
import { type FakeKind, RESOURCES, type ResourcePath } from "./resources.js";
import { notFound, sendJson } from "./responses.js";
import { statusBody } from "./status.js";
import { type ApplyInput, asKind, namespaceFor, type ObjectStore } from "./store.js";

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const MAX_BODY_BYTES = 1024 * 1024;

export type WrittenObject = ApplyInput & { metadata: { resourceVersion?: unknown } };

/**
 * The object a create or update sends, validated as the API server would for the fields this fake cares
 * about; undefined once a 400 or 413 has been answered instead.
 */
export async function readObject(
  request: IncomingMessage,
  response: ServerResponse,
  path: ResourcePath,
): Promise<WrittenObject | undefined> {
  const parsed = await readJson(request, response);
  if (parsed === undefined) return undefined;
  const problem = objectProblem(parsed, path.kind);
  if (problem) {
    sendJson(response, 400, statusBody(400, problem));
    return undefined;
  }
  return parsed as WrittenObject;
}

/** A JSON request body; undefined once a 400 (not JSON) or 413 (too large) has been answered instead. */
export async function readJson(request: IncomingMessage, response: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) {
      sendJson(response, 413, statusBody(413, "request entity too large", "RequestEntityTooLarge"));
      return undefined;
    }
    chunks.push(buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    sendJson(response, 400, statusBody(400, "request body is not JSON"));
    return undefined;
  }
}

/** What the API server's validation would refuse for the fields this fake cares about. */
function objectProblem(input: unknown, kind: FakeKind): string | undefined {
  if (typeof input !== "object" || input === null) return "body must be an object";
  const object = input as { kind?: unknown; metadata?: { name?: unknown }; spec?: Record<string, unknown> };
  if (object.kind !== undefined && object.kind !== kind)
    return `kind ${String(object.kind)} does not match ${kind}`;
  if (typeof object.metadata?.name !== "string" || object.metadata.name === "")
    return "metadata.name: Required value";
  if (kind === "Lease" && object.spec) {
    // Lease times are metav1.MicroTime: RFC 3339 with exactly six fractional digits.
    for (const field of ["acquireTime", "renewTime"]) {
      const value = object.spec[field];
      if (value !== undefined && value !== null && (typeof value !== "string" || !MICRO_TIME.test(value))) {
        return `spec.${field}: not a MicroTime (RFC 3339 with microseconds): ${String(value)}`;
      }
    }
    const duration = object.spec.leaseDurationSeconds;
    if (
      duration !== undefined &&
      duration !== null &&
      !(Number.isInteger(duration) && Number(duration) > 0)
    ) {
      return "spec.leaseDurationSeconds: must be a positive integer";
    }
  }
  asKind(kind);
  return undefined;
}

/**
 * The body of a PUT to an existing object, with where it goes; undefined once a 400, 404, 409 or 413 went out.
 * Optimistic concurrency (API conventions, "Concurrency Control and Consistency"): a stale resourceVersion is
 * a 409 Conflict; an empty one is an unconditional update.
 */
export async function writableObject(
  request: IncomingMessage,
  response: ServerResponse,
  path: ResourcePath,
  store: ObjectStore,
): Promise<{ body: WrittenObject; namespace: string; name: string } | undefined> {
  const body = await readObject(request, response, path);
  const name = path.name;
  if (!body || !name) return undefined;
  const namespace = namespaceFor(path.kind, path.namespace);
  const current = store.get(path.kind, namespace, name);
  if (!current) {
    sendJson(response, 404, notFound(path));
    return undefined;
  }
  const expected = body.metadata.resourceVersion;
  if (typeof expected === "string" && expected !== "" && expected !== current.metadata.resourceVersion) {
    const message = `Operation cannot be fulfilled on ${RESOURCES[path.kind].plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`;
    sendJson(response, 409, statusBody(409, message, "Conflict"));
    return undefined;
  }
  return { body, namespace, name };
}
