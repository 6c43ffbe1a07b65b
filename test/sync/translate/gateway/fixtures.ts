import type { Result } from "../../../../lib/result.js";
import type { GatewayAddressSettings } from "../../../../sync/translate/gateway/addresses.js";
import {
  parseGateway,
  parseGatewayClass,
  parseHTTPRoute,
  parseNamespace,
  parseReferenceGrant,
} from "../../../../sync/translate/gateway/objects.js";
import { type GatewayApiInput, translateGatewayApi } from "../../../../sync/translate/gateway/translate.js";
import { parseService } from "../../../../sync/translate/kube-objects.js";

/**
 * Builders for Gateway API objects as the API server returns them (plain JSON), parsed through the same
 * schemas the sync uses. Defaults: GatewayClass `edgeslice` (ours), Gateway infra/gw with one HTTP listener
 * `http` on port 80, Services in namespace `infra` with port 8080.
 */
export const CONTROLLER = "edgeslice.io/gateway-controller";
const GROUP = "gateway.networking.k8s.io";

function parsed<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`fixture does not parse: ${result.error}`);
  return result.value;
}

type Json = Record<string, unknown>;

export function gatewayClass(name = "edgeslice", controllerName = CONTROLLER, spec: Json = {}) {
  return parsed(
    parseGatewayClass({
      apiVersion: `${GROUP}/v1`,
      kind: "GatewayClass",
      metadata: { name, generation: 1 },
      spec: { controllerName, ...spec },
    }),
  );
}

export function listener(name: string, extra: Json = {}): Json {
  return { name, port: 80, protocol: "HTTP", ...extra };
}

export function gateway(
  options: { name?: string; namespace?: string; className?: string; listeners?: Json[]; spec?: Json } = {},
) {
  return parsed(
    parseGateway({
      apiVersion: `${GROUP}/v1`,
      kind: "Gateway",
      metadata: { name: options.name ?? "gw", namespace: options.namespace ?? "infra", generation: 2 },
      spec: {
        gatewayClassName: options.className ?? "edgeslice",
        listeners: options.listeners ?? [listener("http")],
        ...options.spec,
      },
    }),
  );
}

export function httpRoute(
  name: string,
  spec: Json,
  options: { namespace?: string; createdAt?: string; generation?: number } = {},
) {
  return parsed(
    parseHTTPRoute({
      apiVersion: `${GROUP}/v1`,
      kind: "HTTPRoute",
      metadata: {
        name,
        namespace: options.namespace ?? "infra",
        generation: options.generation ?? 3,
        creationTimestamp: options.createdAt ?? "2024-01-01T00:00:00Z",
      },
      spec: { parentRefs: [{ name: "gw" }], ...spec },
    }),
  );
}

/** A rule sending everything (or `matches`) to Service `name` port 8080. */
export function toService(name: string, extra: Json = {}): Json {
  return { backendRefs: [{ name, port: 8080, ...extra }] };
}

export function referenceGrant(namespace: string, from: Json[], to: Json[]) {
  return parsed(
    parseReferenceGrant({
      apiVersion: `${GROUP}/v1beta1`,
      kind: "ReferenceGrant",
      metadata: { name: "grant", namespace },
      spec: { from, to },
    }),
  );
}

export function service(name: string, namespace = "infra", ports: Json[] = [{ name: "http", port: 8080 }]) {
  return parsed(parseService({ kind: "Service", metadata: { name, namespace }, spec: { ports } }));
}

export function namespace(name: string, labels: Record<string, string> = {}) {
  return parsed(
    parseNamespace({ metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } } }),
  );
}

export const SERVICES = ["infra-backend-v1", "infra-backend-v2", "infra-backend-v3"].map((name) =>
  service(name),
);

/** GATEWAY_ADDRESSES of the tables: every Gateway is reached at the loopback address. */
export const LOOPBACK_ADDRESSES: GatewayAddressSettings = {
  byGateway: new Map(),
  byClass: new Map(),
  fallback: [{ type: "IPAddress", value: "127.0.0.1" }],
};

/**
 * translateGatewayApi over our class, one default Gateway, the infra Services and LOOPBACK_ADDRESSES unless
 * told otherwise.
 */
export function translate(input: Partial<GatewayApiInput>) {
  return translateGatewayApi({
    controllerName: CONTROLLER,
    addresses: LOOPBACK_ADDRESSES,
    gatewayClasses: [gatewayClass()],
    gateways: [gateway()],
    httpRoutes: [],
    referenceGrants: [],
    services: SERVICES,
    ...input,
  });
}

/** The conditions of one route's first parent, as `Type=Status/Reason`. */
export function parentConditions(result: ReturnType<typeof translate>, key: string, parent = 0): string[] {
  const parents = result.statuses.httpRoutes.get(key) ?? [];
  return (parents[parent]?.conditions ?? []).map((item) => `${item.type}=${item.status}/${item.reason}`);
}

/** Listener status as `name: attachedRoutes Type=Status/Reason ...`. */
export function listenerSummary(result: ReturnType<typeof translate>, key = "infra/gw"): string[] {
  return (result.statuses.gateways.get(key)?.listeners ?? []).map(
    (item) =>
      `${item.name}: ${item.attachedRoutes} ${item.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`).join(" ")}`,
  );
}
