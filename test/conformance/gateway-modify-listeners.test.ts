import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAuthority, tlsSecret } from "../support/certificates.js";
import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, untilListeners, workingListener } from "./support/gateway-listeners.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayModifyListeners: an HTTP listener added to a Gateway with an HTTPS one becomes a working
 * listener the Gateway's route attaches to; removing the HTTPS listener of a Gateway with both leaves the
 * HTTP one working. Each change moves the generation, and every condition follows it.
 */
let world: Conformance;
const ADD = "gateway-add-listener";
const REMOVE = "gateway-remove-listener";
const CERTIFICATE = "tls-validity-checks-certificate";
const fromAll = { allowedRoutes: { namespaces: { from: "All" } } };
const https = {
  name: "https",
  port: 443,
  protocol: "HTTPS",
  hostname: "secure.test.com",
  ...fromAll,
  tls: { certificateRefs: [{ group: "", kind: "Secret", name: CERTIFICATE, namespace: INFRA }] },
};
const http = httpListener("http", 80, fromAll);
const route = (name: string, gateway: string) =>
  httpRouteObject(name, {
    parentRefs: [{ kind: "Gateway", name: gateway, namespace: INFRA }],
    rules: [{ backendRefs: [backend("foo-svc")] }],
  });

beforeAll(async () => {
  const authority = createTestAuthority();
  world = await startConformance({
    label: "modify-listeners",
    objects: [
      tlsSecret(INFRA, CERTIFICATE, authority.issue(["secure.test.com"])),
      gatewayObject(ADD, [https]),
      route("http-route-1", ADD),
      gatewayObject(REMOVE, [https, http]),
      route("http-route-2", REMOVE),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

/** Applies `listeners` as the Gateway's spec; waits until its conditions follow the new generation. */
async function changeListeners(gateway: string, listeners: Record<string, unknown>[]) {
  const read = () => readConditions(world.cluster.kube, "Gateway", INFRA, gateway);
  const before = await untilConditions(read, hasLatestConditions);
  expect(hasLatestConditions(before)).toBe(true);
  world.cluster.kube.apply(gatewayObject(gateway, listeners));
  const after = await untilConditions(
    read,
    (found) => found.generation !== before.generation && hasLatestConditions(found),
  );
  expect(after.generation).not.toBe(before.generation);
  expect(hasLatestConditions(after)).toBe(true);
}

describe("conformance GatewayModifyListeners", () => {
  it("adds a listener that becomes available for routes", async () => {
    await changeListeners(ADD, [https, { ...http, hostname: "data.test.com" }]);
    const expected = [workingListener("https", 1), workingListener("http", 1)];
    expect(await untilListeners(world.cluster.kube, ADD, expected)).toEqual(asFound(expected));
  });

  it("removes a listener, leaving the other one's routes", async () => {
    await changeListeners(REMOVE, [http]);
    const expected = [workingListener("http", 1)];
    expect(await untilListeners(world.cluster.kube, REMOVE, expected)).toEqual(asFound(expected));
  });
});
