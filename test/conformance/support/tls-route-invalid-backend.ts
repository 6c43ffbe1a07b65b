import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplyInput } from "../../fake-kube/store.js";
import { gatewayObject } from "./conformance-base.js";
import {
  passthroughListener,
  rejected,
  startTlsRouteConformance,
  type TlsRouteConformance,
  tlsRouteObject,
} from "./tls-route-fixture.js";

/**
 * An official TLSRoute test of a route that attaches but whose only backendRef does not resolve: the Gateway
 * and the route are accepted (the suite's GatewayAndTLSRoutesMustBeAccepted), the route's parent says
 * ResolvedRefs=False with `reason`, and, when `rejects` names the SNI, a connection for it is closed without a
 * TLS answer (the suite's MakeTLSConnectionAndExpectEventuallyConnectionRejection: EOF or reset).
 */
export function describeUnresolvedTlsRoute(
  name: string,
  options: {
    readonly gateway: string;
    readonly route: string;
    readonly hostname: string;
    readonly backendRef: Record<string, unknown>;
    readonly reason: string;
    readonly listener?: Record<string, unknown>;
    readonly more?: readonly ApplyInput[];
    readonly rejects: boolean;
  },
): void {
  let world: TlsRouteConformance;
  beforeAll(async () => {
    world = await startTlsRouteConformance({
      label: name.toLowerCase().slice(0, 24),
      objects: [
        gatewayObject(options.gateway, [
          options.listener ?? passthroughListener("tls", { allowedRoutes: { namespaces: { from: "Same" } } }),
        ]),
        tlsRouteObject(options.route, {
          parentRefs: [{ name: options.gateway, namespace: "gateway-conformance-infra" }],
          hostnames: [options.hostname],
          rules: [{ backendRefs: [options.backendRef] }],
        }),
        ...(options.more ?? []),
      ],
      routers: { [options.gateway]: `gateway-conformance-infra/${options.gateway}` },
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  describe(`conformance ${name}`, () => {
    it(`accepts the route and says ResolvedRefs=False/${options.reason}`, async () => {
      const parents = await world.routeParents(options.route, (found) =>
        found.some((parent) => parent.conditions.includes(`ResolvedRefs=False/${options.reason}`)),
      );
      expect(parents).toEqual([
        {
          parent: options.gateway,
          conditions: expect.arrayContaining([
            "Accepted=True/Accepted",
            `ResolvedRefs=False/${options.reason}`,
          ]),
        },
      ]);
      expect(world.listenerConditions(options.gateway, "tls")).toContainEqual(
        expect.objectContaining({ type: "Programmed", status: "True" }),
      );
    });

    if (options.rejects) {
      it(`rejects a connection for ${options.hostname}: no backend takes it`, async () => {
        await world.routeParents(options.route, (found) => found.length > 0);
        const dial = await world.dialUntil(options.hostname, rejected, options.gateway);
        expect(rejected(dial)).toBe(true);
      });
    }
  });
}
