import { expect, it } from "vitest";
import { endpointAddress, type FamilyRecord } from "../../../store/records.js";
import { translateService } from "../../../sync/translate/backends.js";
import type { KubeEndpointSlice, KubeService } from "../../../sync/translate/kube-objects.js";

/** Builders for the parsed Services and slices the translation tests feed in: Service shop/web by default. */

export type ServicePort = { name?: string; port: number; protocol?: string; appProtocol?: string };
type Conditions = { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null } | null;
type SlicePort = { name?: string | null; port?: number | null; protocol?: string | null };

export const http: ServicePort[] = [{ name: "http", port: 80 }];
export const NOT_READY = { ready: false, serving: false, terminating: false };
export const TERMINATING_SERVING = { ready: false, serving: true, terminating: true };
export const TERMINATING_GONE = { ready: false, serving: false, terminating: true };

/** Service web: in namespace shop, with one port named http (80) unless told otherwise. */
export function service(
  options: { ports?: ServicePort[]; annotations?: Record<string, string> | null; namespace?: string } = {},
): KubeService {
  const metadata = { name: "web", namespace: options.namespace ?? "shop" };
  return {
    kind: "Service",
    metadata:
      options.annotations === undefined ? metadata : { ...metadata, annotations: options.annotations },
    spec: { ports: options.ports ?? http },
  };
}

export function endpoint(
  addresses: string | string[],
  conditions?: Conditions,
  extra: Record<string, unknown> = {},
) {
  return {
    addresses: Array.isArray(addresses) ? addresses : [addresses],
    ...(conditions === undefined ? {} : { conditions }),
    ...extra,
  };
}

/** A slice of shop/web (IPv4, one TCP port named http: 8080) unless told otherwise. */
export function slice(options: {
  name: string;
  addressType?: string;
  ports?: SlicePort[] | null;
  endpoints?: ReturnType<typeof endpoint>[] | null;
  serviceName?: string;
  namespace?: string;
  labels?: Record<string, string>;
}): KubeEndpointSlice {
  return {
    kind: "EndpointSlice",
    metadata: {
      name: options.name,
      namespace: options.namespace ?? "shop",
      labels: { "kubernetes.io/service-name": options.serviceName ?? "web", ...options.labels },
    },
    addressType: options.addressType ?? "IPv4",
    ports: options.ports === undefined ? [{ name: "http", port: 8080, protocol: "TCP" }] : options.ports,
    endpoints: options.endpoints === undefined ? [] : options.endpoints,
  } as KubeEndpointSlice;
}

/** A family as `--print` shows it: addresses only, so each row reads at a glance. */
export interface FamilyView {
  endpoints: string[];
  fallback: boolean;
  draining: string[];
}

export function view(family: FamilyRecord): FamilyView {
  return {
    endpoints: family.endpoints.map(endpointAddress),
    fallback: family.fallback,
    draining: family.draining.map(endpointAddress),
  };
}

export const fam = (endpoints: string[], fallback = false, draining: string[] = []): FamilyView => ({
  endpoints,
  fallback,
  draining,
});
export const none = fam([]);

/** One translation case: the Service's ports and slices, and what each port becomes. */
export interface TranslationRow {
  case: string;
  ports: ServicePort[];
  slices: KubeEndpointSlice[];
  /** One entry per Service port, in spec order. */
  expected: { ipv4: FamilyView; ipv6: FamilyView }[];
}

/** `rows` for it.each, each titled by its case in full (vitest shortens a `$case` title to 40 characters). */
export function byCase<Row extends { case: string }>(rows: readonly Row[]): (readonly [string, Row])[] {
  return rows.map((row) => [row.case, row] as const);
}

/** Each row as a test, and again with its slices in reverse order: the result must not depend on it. */
export function translationCases(rows: readonly TranslationRow[]): void {
  it.each(byCase(rows))("%s", (_case, row) => {
    const result = translateService(service({ ports: row.ports }), row.slices);
    expect(result.map((entry) => ({ ipv4: view(entry.ipv4), ipv6: view(entry.ipv6) }))).toEqual(row.expected);
  });

  it.each(byCase(rows))("gives the same result whatever the slice order: %s", (_case, row) => {
    const forward = translateService(service({ ports: row.ports }), row.slices);
    const reversed = translateService(service({ ports: row.ports }), [...row.slices].reverse());
    expect(reversed).toEqual(forward);
  });
}
