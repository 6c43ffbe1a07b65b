import type { ServerResponse } from "node:http";
import { RESOURCES, type ResourcePath } from "./resources.js";
import { type StatusBody, statusBody } from "./status.js";

/** How the fake API server answers: one JSON body, or one watch event a line on a chunked stream. */

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  response.end(text);
}

export function writeEvent(response: ServerResponse, type: string, object: unknown): void {
  if (response.writableEnded || response.destroyed) return;
  response.write(`${JSON.stringify({ type, object })}\n`);
}

export function notFound(path: ResourcePath): StatusBody {
  return statusBody(404, `${RESOURCES[path.kind].plural} "${path.name ?? ""}" not found`, "NotFound");
}
