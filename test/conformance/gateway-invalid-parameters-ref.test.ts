import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_API, httpListener, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayInvalidParametersRef: a Gateway whose infrastructure.parametersRef names parameters
 * edgeslice cannot use (here a ConfigMap that does not exist; edgeslice reads no parameters of any kind) is
 * Accepted=False InvalidParameters, its conditions at its generation.
 */
let world: Conformance;
const GATEWAY = "gateway-invalid-parameters-ref";

beforeAll(async () => {
  world = await startConformance({
    label: "invalid-params",
    objects: [
      {
        apiVersion: GATEWAY_API,
        kind: "Gateway",
        metadata: { name: GATEWAY, namespace: INFRA },
        spec: {
          gatewayClassName: "edgeslice",
          infrastructure: {
            parametersRef: { group: "", kind: "ConfigMap", name: "invalid-parameters-ref-missing" },
          },
          listeners: [httpListener("http", 80)],
        },
      },
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance GatewayInvalidParametersRef", () => {
  it("does not accept the Gateway, reason InvalidParameters", async () => {
    const found = await untilConditions(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY),
      hasLatestConditions,
    );
    expect(hasLatestConditions(found)).toBe(true);
    expect(found.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "Accepted", status: "False", reason: "InvalidParameters" }),
      ]),
    );
  });
});
