import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplyInput } from "../../fake-kube/store.js";
import { INFRA } from "./conformance-base.js";
import { type Conformance, startConformance } from "./conformance-fixture.js";
import { readListeners } from "./gateway-listeners.js";
import { type ParentConditions, untilParents } from "./route-parents.js";

/**
 * An official test of a route that must not attach: its parent entry for the Gateway says Accepted=False with
 * `reason`, no parent accepts it, and the Gateway counts no route on any listener (the suite's
 * HTTPRouteMustHaveCondition, HTTPRouteMustHaveNoAcceptedParents and GatewayMustHaveZeroRoutes).
 */
export function describeRefusedRoute(
  name: string,
  options: {
    readonly objects: readonly ApplyInput[];
    readonly route: string;
    /** The route's namespace; default the infra namespace. */
    readonly namespace?: string;
    /** The route's kind; default HTTPRoute. */
    readonly kind?: "HTTPRoute" | "TLSRoute";
    readonly gateway: string;
    readonly reason: string;
    /** Other conditions the parent entry must hold, as `Type=Status/Reason`. */
    readonly alsoConditions?: readonly string[];
  },
): void {
  let world: Conformance;
  beforeAll(async () => {
    world = await startConformance({ label: name.toLowerCase().slice(0, 20), objects: options.objects });
  }, 30_000);
  afterAll(() => world?.stop());

  const refused = (parents: readonly ParentConditions[]) =>
    parents.some(
      (entry) =>
        entry.parent.split("/")[0] === options.gateway &&
        entry.conditions.includes(`Accepted=False/${options.reason}`),
    );

  describe(`conformance ${name}`, () => {
    it(`says Accepted=False/${options.reason} for ${options.route} on ${options.gateway}, and no parent accepts it`, async () => {
      const parents = await untilParents(
        world.cluster.kube,
        options.namespace ?? INFRA,
        options.route,
        refused,
        5_000,
        options.kind,
      );
      expect(refused(parents)).toBe(true);
      const entry = parents.find((item) => item.parent.split("/")[0] === options.gateway);
      expect(entry?.conditions).toEqual(expect.arrayContaining([...(options.alsoConditions ?? [])]));
      expect(
        parents.filter((entry) => entry.conditions.some((item) => item.startsWith("Accepted=True"))),
      ).toEqual([]);
    });

    it(`counts no route on the listeners of ${options.gateway}`, async () => {
      await untilParents(
        world.cluster.kube,
        options.namespace ?? INFRA,
        options.route,
        refused,
        5_000,
        options.kind,
      );
      const listeners = readListeners(world.cluster.kube, options.gateway);
      expect(listeners.length).toBeGreaterThan(0);
      expect(listeners.map((listener) => listener.attachedRoutes)).toEqual(listeners.map(() => 0));
    });
  });
}
