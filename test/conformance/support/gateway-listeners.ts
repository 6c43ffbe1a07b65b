import { expect } from "vitest";
import type { FakeKube } from "../../fake-kube/server.js";
import { INFRA } from "./conformance-base.js";

/** One listener of a Gateway's status: kinds as `group/Kind`, conditions as `Type=Status/Reason`. */
export interface ListenerSummary {
  readonly name: string;
  readonly supportedKinds: readonly string[];
  readonly conditions: readonly string[];
  readonly attachedRoutes: number;
}

/** What the suite's GatewayStatusMustHaveListeners expects of one listener; a condition without reason: any. */
export interface ExpectedListener {
  readonly name: string;
  readonly supportedKinds: readonly string[];
  /** `Type=Status` or `Type=Status/Reason`. */
  readonly conditions: readonly string[];
  readonly attachedRoutes: number;
}

export const HTTP_ROUTE_KIND = "gateway.networking.k8s.io/HTTPRoute";

export function readListeners(kube: FakeKube, gateway: string, namespace = INFRA): ListenerSummary[] {
  type Entry = {
    name: string;
    supportedKinds?: { group?: string; kind: string }[];
    conditions?: { type: string; status: string; reason: string }[];
    attachedRoutes?: number;
  };
  const status = kube.get("Gateway", namespace, gateway)?.status as { listeners?: Entry[] } | undefined;
  return (status?.listeners ?? []).map((entry) => ({
    name: entry.name,
    supportedKinds: (entry.supportedKinds ?? []).map((kind) => `${kind.group ?? ""}/${kind.kind}`),
    conditions: (entry.conditions ?? []).map((item) => `${item.type}=${item.status}/${item.reason}`),
    attachedRoutes: entry.attachedRoutes ?? 0,
  }));
}

/**
 * The suite's listenersMatch: the same listeners by name, at least the expected kinds, the same attachedRoutes,
 * and the expected conditions present.
 */
export function listenersMatch(
  found: readonly ListenerSummary[],
  expected: readonly ExpectedListener[],
): boolean {
  return (
    found.length === expected.length &&
    expected.every((want) => {
      const got = found.find((item) => item.name === want.name);
      return (
        got !== undefined &&
        got.attachedRoutes === want.attachedRoutes &&
        kindsMatch(got.supportedKinds, want.supportedKinds) &&
        want.conditions.every((condition) =>
          got.conditions.some((item) => item === condition || item.startsWith(`${condition}/`)),
        )
      );
    })
  );
}

/**
 * The suite's check of supportedKinds: every expected kind is supported (an implementation may support more
 * kinds than a test names), and an expected empty list means none.
 */
function kindsMatch(found: readonly string[], expected: readonly string[]): boolean {
  return expected.length === 0 ? found.length === 0 : expected.every((kind) => found.includes(kind));
}

/** Reads the Gateway's listeners until they match `expected` or `timeoutMs` passed. */
export async function untilListeners(
  kube: FakeKube,
  gateway: string,
  expected: readonly ExpectedListener[],
  timeoutMs = 5_000,
): Promise<ListenerSummary[]> {
  const deadline = Date.now() + timeoutMs;
  while (!listenersMatch(readListeners(kube, gateway), expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return readListeners(kube, gateway);
}

/** The listener the suite expects of a working HTTP listener: Accepted, refs resolved, HTTPRoute supported. */
export const workingListener = (name: string, attachedRoutes: number): ExpectedListener => ({
  name,
  supportedKinds: [HTTP_ROUTE_KIND],
  conditions: ["Accepted=True", "ResolvedRefs=True"],
  attachedRoutes,
});

/** `expected` as matchers of what readListeners gives, as listenersMatch compares them. */
export function asFound(expected: readonly ExpectedListener[]) {
  return expected.map((listener) => ({
    ...listener,
    supportedKinds:
      listener.supportedKinds.length === 0 ? [] : expect.arrayContaining([...listener.supportedKinds]),
    conditions: expect.arrayContaining(
      listener.conditions.map((item) =>
        item.split("/").length > 1 ? item : expect.stringMatching(`^${item}/`),
      ),
    ),
  }));
}
