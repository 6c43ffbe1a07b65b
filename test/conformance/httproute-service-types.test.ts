import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplyInput } from "../fake-kube/store.js";
import { backend, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteServiceTypes: one route to five Services backed by infra-backend-v1's pod: headless
 * with a selector, with manual Endpoints, with manual EndpointSlices, and headless with each manual kind.
 * The sync reads EndpointSlices only; on a cluster the Kubernetes controllers write them (the EndpointSlice
 * controller for a selector, the mirroring controller for manual Endpoints), so this world writes the slices
 * those controllers would, with their managed-by labels, next to the test's own manual slices.
 */
let world: Conformance;
const ROUTE = "service-types";
const MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
const KINDS = {
  headless: { headless: true, managedBy: "endpointslice-controller.k8s.io" },
  "manual-endpoints": { headless: false, managedBy: "endpointslicemirroring-controller.k8s.io" },
  "manual-endpointslices": { headless: false, managedBy: undefined },
  "headless-manual-endpoints": { headless: true, managedBy: "endpointslicemirroring-controller.k8s.io" },
  "headless-manual-endpointslices": { headless: true, managedBy: undefined },
} as const;
const NAMES = Object.keys(KINDS) as (keyof typeof KINDS)[];

function serviceAndSlice(name: keyof typeof KINDS, ip: string, port: number): ApplyInput[] {
  const { headless, managedBy } = KINDS[name];
  return [
    {
      kind: "Service",
      metadata: { name, namespace: INFRA },
      spec: {
        ...(headless ? { clusterIP: "None" } : {}),
        ...(name === "headless" ? { selector: { app: "infra-backend-v1" } } : {}),
        ports: [{ name: "first-port", protocol: "TCP", port: 8080, targetPort: 3000 }],
      },
    },
    {
      kind: "EndpointSlice",
      metadata: {
        name: managedBy ? `${name}-x7k2p` : name,
        namespace: INFRA,
        labels: { "kubernetes.io/service-name": name, ...(managedBy ? { [MANAGED_BY]: managedBy } : {}) },
      },
      addressType: "IPv4",
      ports: [{ name: "first-port", port, protocol: "TCP" }],
      endpoints: [{ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } }],
    },
  ];
}

beforeAll(async () => {
  world = await startConformance({
    label: "service-types",
    objects: [
      httpRouteObject(ROUTE, {
        parentRefs: [{ name: "same-namespace" }],
        rules: NAMES.map((name) => ({
          matches: [{ path: { type: "Exact", value: `/${name}` } }],
          backendRefs: [backend(name)],
        })),
      }),
    ],
  });
  // The pod of infra-backend-v1: the address and port its own EndpointSlice names.
  const slice = world.cluster.kube.get("EndpointSlice", INFRA, "infra-backend-v1-1") as unknown as {
    endpoints: { addresses: string[] }[];
    ports: { port: number }[];
  };
  const ip = slice.endpoints[0]?.addresses[0] as string;
  const port = slice.ports[0]?.port as number;
  for (const name of NAMES)
    for (const object of serviceAndSlice(name, ip, port)) world.cluster.kube.apply(object);
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteServiceTypes", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, ROUTE, (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it.each(NAMES)("routes /%s to infra-backend-v1's pod", async (name) => {
    const answer = await world.until(
      { host: GATEWAY_ADDRESS, path: `/${name}` },
      (found) => found.status === 200,
    );
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(`${INFRA}/infra-backend-v1`);
  });
});
