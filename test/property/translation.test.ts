import { isIPv4, isIPv6 } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EndpointRecord } from "../../store/records.js";
import { translateService } from "../../sync/translate/backends.js";
import {
  type KubeEndpointSlice,
  parseEndpointSlice,
  parseService,
} from "../../sync/translate/kube-objects.js";
import {
  NAMESPACE,
  poolFamilyOf,
  poolIndexOf,
  SERVICE_NAME,
  serviceArb,
  shuffled,
  slicesArb,
} from "./slice-arbitraries.js";

const RUNS = { numRuns: 500 };

function withShuffledEndpoints(slice: KubeEndpointSlice, seed: number): KubeEndpointSlice {
  return { ...slice, endpoints: slice.endpoints ? shuffled(slice.endpoints, seed) : slice.endpoints };
}

function allReady(slice: KubeEndpointSlice): KubeEndpointSlice {
  return {
    ...slice,
    endpoints: slice.endpoints?.map((e) => ({
      ...e,
      conditions: { ready: true, serving: true, terminating: false },
    })),
  };
}

function addressesOf(endpoints: readonly EndpointRecord[]): string[] {
  return endpoints.map((e) => `${e.ip}|${e.port}`);
}

describe("translation properties (docs/design.md, translation rules 1-6)", () => {
  it("shuffling the order the slices arrive in gives the same backends", () => {
    fc.assert(
      fc.property(serviceArb, slicesArb, fc.integer(), (service, slices, seed) => {
        expect(translateService(service, shuffled(slices, seed))).toEqual(translateService(service, slices));
      }),
      RUNS,
    );
  });

  it("shuffling the endpoints inside every slice gives the same backends", () => {
    fc.assert(
      fc.property(serviceArb, slicesArb, fc.integer(), (service, slices, seed) => {
        const reordered = slices.map((slice, index) => withShuffledEndpoints(slice, seed + index));
        expect(translateService(service, reordered)).toEqual(translateService(service, slices));
      }),
      RUNS,
    );
  });

  it("delivering every slice twice, in any order, changes nothing", () => {
    fc.assert(
      fc.property(serviceArb, slicesArb, fc.integer(), (service, slices, seed) => {
        const twice = shuffled([...slices, ...slices], seed);
        expect(translateService(service, twice)).toEqual(translateService(service, slices));
      }),
      RUNS,
    );
  });

  // Rule 5 breaks ties by the lexically first slice name, so a copy only changes nothing where it cannot win
  // a tie it did not already win: after every other slice, or before all of them when it copies the first one.
  it("a copy of any slice under a name sorting after every other slice changes nothing", () => {
    fc.assert(
      fc.property(
        serviceArb,
        slicesArb.filter((slices) => slices.length > 0),
        fc.nat(),
        (service, slices, pick) => {
          const original = slices[pick % slices.length];
          if (!original) return;
          const copy = { ...original, metadata: { ...original.metadata, name: "zz-copy" } };
          expect(translateService(service, [...slices, copy])).toEqual(translateService(service, slices));
        },
      ),
      RUNS,
    );
  });

  it("a copy of the lexically first slice under a name sorting before every slice changes nothing", () => {
    fc.assert(
      fc.property(
        serviceArb,
        slicesArb.filter((slices) => slices.length > 0),
        (service, slices) => {
          const first = [...slices].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))[0];
          if (!first) return;
          const copy = { ...first, metadata: { ...first.metadata, name: "a-copy" } };
          expect(translateService(service, [copy, ...slices])).toEqual(translateService(service, slices));
        },
      ),
      RUNS,
    );
  });

  it("the tie between equally ranked copies in two slices goes to the lexically first slice name, whatever the order", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("zone-a", "zone-b"),
        fc.constantFrom("zone-a", "zone-b"),
        fc.boolean(),
        (zoneA, zoneB, flip) => {
          const slice = (name: string, zone: string) => {
            const parsed = parseEndpointSlice({
              metadata: {
                name,
                namespace: NAMESPACE,
                labels: { "kubernetes.io/service-name": SERVICE_NAME },
              },
              addressType: "IPv4",
              ports: [{ name: "", port: 8080 }],
              endpoints: [{ addresses: ["10.0.0.1"], zone }],
            });
            if (!parsed.ok) throw new Error(parsed.error);
            return parsed.value;
          };
          const service = parseService({
            metadata: { name: SERVICE_NAME, namespace: NAMESPACE },
            spec: { ports: [{ name: "", port: 80 }] },
          });
          if (!service.ok) throw new Error(service.error);
          const slices = [slice("svc-first", zoneA), slice("svc-second", zoneB)];
          const [port] = translateService(service.value, flip ? slices.reverse() : slices);
          expect(port?.ipv4.endpoints).toEqual([{ ip: "10.0.0.1", port: 8080, zone: zoneA }]);
        },
      ),
      { numRuns: 20 },
    );
  });

  it("every backend sits in the set of its own address family, once per (ip, port), sorted", () => {
    fc.assert(
      fc.property(serviceArb, slicesArb, (service, slices) => {
        for (const port of translateService(service, slices)) {
          for (const [family, isFamily] of [
            [port.ipv4, isIPv4],
            [port.ipv6, isIPv6],
          ] as const) {
            for (const set of [family.endpoints, family.draining]) {
              for (const endpoint of set) expect(isFamily(endpoint.ip), endpoint.ip).toBe(true);
              const keys = addressesOf(set);
              expect(new Set(keys).size).toBe(keys.length);
            }
            if (family.endpoints.length === 0) expect(family.fallback).toBe(false);
          }
        }
      }),
      RUNS,
    );
  });

  it("every backend comes from a slice of this Service whose address type matches its family (nothing invented)", () => {
    fc.assert(
      fc.property(serviceArb, slicesArb, (service, slices) => {
        const own = slices.filter(
          (s) =>
            (s.metadata.namespace ?? "default") === NAMESPACE &&
            s.metadata.labels?.["kubernetes.io/service-name"] === SERVICE_NAME,
        );
        for (const port of translateService(service, slices)) {
          for (const [family, addressType] of [
            [port.ipv4, "IPv4"],
            [port.ipv6, "IPv6"],
          ] as const) {
            for (const endpoint of [...family.endpoints, ...family.draining]) {
              const index = poolIndexOf(endpoint.ip);
              expect(index, `${endpoint.ip} is not an address any slice listed`).toBeDefined();
              const listedBy = own.filter(
                (s) =>
                  s.addressType === addressType &&
                  (s.endpoints ?? []).some(
                    (e) => e.addresses[0] !== undefined && poolIndexOf(e.addresses[0]) === index,
                  ),
              );
              expect(listedBy.length).toBeGreaterThan(0);
            }
          }
        }
      }),
      RUNS,
    );
  });

  it("when every endpoint is ready, each valid address of the slice's family with a matching port is served exactly once (nothing lost)", () => {
    fc.assert(
      fc.property(serviceArb, slicesArb, (service, generated) => {
        const slices = generated.map(allReady);
        const result = translateService(service, slices);
        for (const port of result) {
          for (const [family, addressType, familyName] of [
            [port.ipv4, "IPv4", "ipv4"],
            [port.ipv6, "IPv6", "ipv6"],
          ] as const) {
            const expected = new Set<string>();
            for (const slice of slices) {
              if ((slice.metadata.namespace ?? "default") !== NAMESPACE) continue;
              if (slice.metadata.labels?.["kubernetes.io/service-name"] !== SERVICE_NAME) continue;
              if (slice.addressType !== addressType) continue;
              const slicePort = (slice.ports ?? []).find(
                (p) => (p.name ?? "") === port.port.name && (p.protocol ?? "TCP") === port.port.protocol,
              );
              if (!slicePort?.port) continue;
              for (const endpoint of slice.endpoints ?? []) {
                const first = endpoint.addresses[0];
                const index = first === undefined ? undefined : poolIndexOf(first);
                if (index !== undefined && poolFamilyOf(index) === familyName)
                  expected.add(`${index}|${slicePort.port}`);
              }
            }
            const served = family.endpoints.map((e) => `${poolIndexOf(e.ip)}|${e.port}`);
            expect(new Set(served)).toEqual(expected);
            expect(served.length).toBe(expected.size);
            expect(family.fallback).toBe(false);
            expect(family.draining).toEqual([]);
          }
        }
      }),
      RUNS,
    );
  });
});
