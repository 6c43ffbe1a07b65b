import { pollUntil } from "../../support/envtest-process.js";
import type { ControlPlane } from "../control-plane.js";
import type { GatewayApiObject } from "./gateway-routes.js";
import { GATEWAY_CONTROLLER } from "./route-objects.js";

export const GATEWAYS = "/apis/gateway.networking.k8s.io/v1";
export const ROUTES = `${GATEWAYS}/namespaces/shop/httproutes`;

/** The objects whose status the gateway-api case watches for rewrites: the shop routes, Gateway infra/gw, its class. */
const STATUS_PATHS = [
  ...["canary", "cross", "missing", "elsewhere", "theirs"].map((name) => `${ROUTES}/${name}`),
  `${GATEWAYS}/namespaces/infra/gateways/gw`,
  `${GATEWAYS}/gatewayclasses/edgeslice`,
];

/** Reads of the Gateway API objects' status on `plane()` (a getter: the plane exists once beforeAll ran). */
export function gatewayStatus(plane: () => ControlPlane) {
  const getObject = async (path: string): Promise<GatewayApiObject> => {
    const response = await plane().get(path);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
    return JSON.parse(response.body) as GatewayApiObject;
  };
  /** Our entry of an HTTPRoute's status.parents, conditions by type. */
  const ourParent = async (name: string) => {
    const object = await getObject(`${ROUTES}/${name}`);
    const entry = object.status?.parents?.find((item) => item.controllerName === GATEWAY_CONTROLLER);
    return { object, entry, conditions: new Map(entry?.conditions.map((item) => [item.type, item])) };
  };
  return {
    getObject,
    ourParent,
    untilCondition: (name: string, type: string, reason: string) =>
      pollUntil(async () => (await ourParent(name)).conditions.get(type)?.reason === reason, {
        timeoutMs: 15_000,
        describe: () => `HTTPRoute shop/${name} never got ${type} ${reason}`,
      }),
    /** The resourceVersions of the watched objects: any status rewrite changes one. */
    versions: () =>
      Promise.all(STATUS_PATHS.map(async (path) => (await getObject(path)).metadata.resourceVersion)),
  };
}
