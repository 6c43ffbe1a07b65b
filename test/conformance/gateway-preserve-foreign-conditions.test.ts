import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject, httpListener, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayPreserveForeignConditions: a condition of a type edgeslice does not set, on the Gateway
 * and on a listener, survives untouched while edgeslice rewrites its own conditions for a new generation
 * (ListenerStatus.conditions: implementations "MUST NOT remove or reorder Conditions that they are not
 * directly responsible for").
 */
let world: Conformance;
const GATEWAY = "gateway-preserve-foreign-conditions";
const gateway = (hostname?: string) =>
  gatewayObject(GATEWAY, [
    httpListener("http", 80, {
      ...(hostname ? { hostname } : {}),
      allowedRoutes: { namespaces: { from: "Same" } },
    }),
  ]);
type Status = {
  conditions: Record<string, unknown>[];
  listeners: { name: string; conditions: Record<string, unknown>[] }[];
};

beforeAll(async () => {
  world = await startConformance({ label: "foreign-conditions", objects: [gateway()] });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance GatewayPreserveForeignConditions", () => {
  it("keeps a foreign condition on the Gateway and its listener as written while updating its own", async () => {
    const kube = world.cluster.kube;
    const read = () => readConditions(kube, "Gateway", INFRA, GATEWAY);
    await untilConditions(read, (found) => hasLatestConditions(found) && found.conditions.length > 2);
    const current = kube.get("Gateway", INFRA, GATEWAY);
    if (!current) throw new Error(`no Gateway ${GATEWAY}`);
    const generation = Number(current.metadata.generation);
    const foreign = {
      type: "example.net/StaleCondition",
      status: "True",
      reason: "Seeded",
      message: "",
      observedGeneration: generation,
      lastTransitionTime: "2026-01-01T00:00:00Z",
    };
    const status = structuredClone(current.status) as Status;
    status.conditions.push(foreign);
    status.listeners.find((item) => item.name === "http")?.conditions.push(foreign);
    // Written through the status as another controller would (the generation stays), then the spec changes.
    kube.apply({ ...current, status } as never);
    kube.apply(gateway("second.example.com"));

    const caughtUp = (found: ReturnType<typeof read>) =>
      found.generation > generation &&
      found.conditions
        .filter((item) => item.type !== foreign.type)
        .every((item) => item.observedGeneration === found.generation);
    expect(caughtUp(await untilConditions(read, caughtUp))).toBe(true);
    const after = kube.get("Gateway", INFRA, GATEWAY)?.status as Status;
    expect(after.conditions.find((item) => item.type === foreign.type)).toEqual(foreign);
    const listener = after.listeners.find((item) => item.name === "http");
    expect(listener?.conditions.find((item) => item.type === foreign.type)).toEqual(foreign);
  });
});
