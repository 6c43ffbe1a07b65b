import type { Result } from "../../../../lib/result.js";
import { parseIngress, parseIngressClass } from "../../../../sync/translate/ingress/objects.js";
import { type IngressInput, translateIngresses } from "../../../../sync/translate/ingress/translate.js";
import { parseService } from "../../../../sync/translate/kube-objects.js";

/**
 * Builders for IngressClass and Ingress as the API server returns them, parsed through the sync's schemas.
 * Defaults: our class `edgeslice`, Ingresses in namespace `shop`, Services `shop/web` (port http 80) and
 * `shop/api` (ports http 8080 and grpc 9090).
 */
export const CONTROLLER = "edgeslice.io/ingress-controller";

function parsed<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`fixture does not parse: ${result.error}`);
  return result.value;
}

export function ingressClass(name = "edgeslice", controller = CONTROLLER, isDefault = false) {
  const annotations = isDefault ? { "ingressclass.kubernetes.io/is-default-class": "true" } : undefined;
  return parsed(
    parseIngressClass({ kind: "IngressClass", metadata: { name, annotations }, spec: { controller } }),
  );
}

export function ingress(
  name: string,
  spec: Record<string, unknown>,
  options: { annotations?: Record<string, string>; createdAt?: string | Date } = {},
) {
  return parsed(
    parseIngress({
      kind: "Ingress",
      metadata: {
        name,
        namespace: "shop",
        annotations: options.annotations,
        creationTimestamp: options.createdAt ?? "2024-01-01T00:00:00Z",
      },
      spec,
    }),
  );
}

/** An HTTPIngressPath to Service `service` on port `port` (a number or a port name). */
export function path(
  value: string | undefined,
  pathType: string,
  service = "web",
  port: number | string = 80,
) {
  const servicePort = typeof port === "number" ? { number: port } : { name: port };
  return {
    ...(value === undefined ? {} : { path: value }),
    pathType,
    backend: { service: { name: service, port: servicePort } },
  };
}

export const SERVICES = [
  parsed(
    parseService({
      metadata: { name: "web", namespace: "shop" },
      spec: { ports: [{ name: "http", port: 80 }] },
    }),
  ),
  parsed(
    parseService({
      metadata: { name: "api", namespace: "shop" },
      spec: {
        ports: [
          { name: "http", port: 8080 },
          { name: "grpc", port: 9090 },
        ],
      },
    }),
  ),
];

export function translate(input: Partial<IngressInput>) {
  return translateIngresses({
    controllerName: CONTROLLER,
    ingressClasses: [ingressClass()],
    ingresses: [],
    services: SERVICES,
    ...input,
  });
}
