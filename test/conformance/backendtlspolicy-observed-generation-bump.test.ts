import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeBackendTlsRecord } from "../../store/backend-tls.js";
import { clusterKeys } from "../../store/keys.js";
import { published } from "../control-plane/support/store.js";
import { createTestAuthority } from "../support/certificates.js";
import { eventually } from "../support/eventually.js";
import { caPolicy, configMapObject, serviceAt, untilAncestors } from "./support/backend-tls-objects.js";
import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance BackendTLSPolicyObservedGenerationBump: after its validation.hostname changes, every condition
 * of the policy's ancestors carries the new generation, and it stays Accepted.
 */
let world: Conformance;
const POLICY = "observed-generation-bump";
const policy = (hostname: string) =>
  caPolicy(POLICY, "observed-generation-bump-test", { hostname, sectionName: "https" });

beforeAll(async () => {
  world = await startConformance({
    label: "btls-gen",
    objects: [
      httpRouteObject("backendtlspolicy-observed-generation-bump", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [{ backendRefs: [{ name: "observed-generation-bump-test", port: 443 }] }],
      }),
      policy("abc.example.com"),
      // The suite makes this CA ConfigMap as it starts (MustCreateCACertConfigMap).
      configMapObject("tls-checks-ca-certificate", { "ca.crt": createTestAuthority().cert }),
    ],
    objectsAt: (backends) => {
      const echo = backends.get(`${INFRA}/infra-backend-v1`);
      if (!echo) throw new Error("no echo backend");
      return serviceAt("observed-generation-bump-test", echo, [{ name: "https", port: 443 }]);
    },
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance BackendTLSPolicyObservedGenerationBump", () => {
  it("publishes the port as https with its policy, and the policy's record beside the certificates", async () => {
    const { redis, prefix } = world.store;
    const keys = clusterKeys(prefix, "east");
    await eventually(
      async () => (await redis.hexists(keys.backendTls, `policy:${INFRA}/${POLICY}`)) === 1,
      5_000,
      "the policy's record",
    );
    const record = decodeBackendTlsRecord(
      (await redis.hget(keys.backendTls, `policy:${INFRA}/${POLICY}`)) ?? "",
    );
    expect(record.ok && record.value).toMatchObject({
      kind: "policy",
      hostname: "abc.example.com",
      trust: { pem: expect.any(String) },
    });
    const service = (await published(redis, prefix, "east")).services.get(
      `${INFRA}/observed-generation-bump-test`,
    );
    expect(service?.ports).toMatchObject([
      { number: 443, protocol: "https", tls: { policy: `${INFRA}/${POLICY}` } },
    ]);
  });

  it("writes the new generation into every ancestor condition after a spec change, still Accepted", async () => {
    const read = () => readConditions(world.cluster.kube, "BackendTLSPolicy", INFRA, POLICY);
    const before = await untilConditions(read, hasLatestConditions);
    expect(hasLatestConditions(before)).toBe(true);

    world.cluster.kube.apply(policy("foo.example.com"));
    const after = await untilConditions(
      read,
      (found) => found.generation !== before.generation && hasLatestConditions(found),
    );
    expect(after.generation).not.toBe(before.generation);
    expect(hasLatestConditions(after)).toBe(true);
    expect(await untilAncestors(world.cluster.kube, POLICY, (lines) => lines.length > 0)).toEqual([
      expect.stringMatching(/^same-namespace: Accepted=True\//),
    ]);
  });
});
