import * as v from "valibot";
import type { Result } from "../../lib/result.js";

/**
 * The parts of Service and EndpointSlice (discovery.k8s.io/v1) that edgeslice reads, validated at the
 * boundary. Objects are loose: unknown fields pass through untouched. `null` and absent are treated alike,
 * as the API server and client-node produce both.
 */
const NameSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(253));
const StringMapSchema = v.nullish(v.record(v.string(), v.string()));

const ServiceMetadataSchema = v.looseObject({
  name: NameSchema,
  namespace: v.nullish(NameSchema),
  annotations: StringMapSchema,
  labels: StringMapSchema,
  resourceVersion: v.nullish(v.string()),
});

const ServicePortSpecSchema = v.looseObject({
  name: v.nullish(v.string()),
  port: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
  protocol: v.nullish(v.string()),
  targetPort: v.nullish(v.union([v.number(), v.string()])),
});

export const KubeServiceSchema = v.looseObject({
  kind: v.nullish(v.string()),
  metadata: ServiceMetadataSchema,
  spec: v.nullish(
    v.looseObject({
      ports: v.nullish(v.array(ServicePortSpecSchema)),
      type: v.nullish(v.string()),
    }),
  ),
});
export type KubeService = v.InferOutput<typeof KubeServiceSchema>;

const ConditionSchema = v.nullish(v.boolean());

const EndpointSchema = v.looseObject({
  addresses: v.array(v.string()),
  conditions: v.nullish(
    v.looseObject({ ready: ConditionSchema, serving: ConditionSchema, terminating: ConditionSchema }),
  ),
  zone: v.nullish(v.string()),
  nodeName: v.nullish(v.string()),
  hints: v.nullish(v.looseObject({ forZones: v.nullish(v.array(v.looseObject({ name: v.string() }))) })),
});

const SlicePortSchema = v.looseObject({
  name: v.nullish(v.string()),
  port: v.nullish(v.number()),
  protocol: v.nullish(v.string()),
});

export const KubeEndpointSliceSchema = v.looseObject({
  kind: v.nullish(v.string()),
  metadata: v.looseObject({
    name: NameSchema,
    namespace: v.nullish(NameSchema),
    labels: StringMapSchema,
    resourceVersion: v.nullish(v.string()),
  }),
  /** "IPv4" | "IPv6" | "FQDN"; kept open so a future type is ignored rather than rejected. */
  addressType: v.string(),
  endpoints: v.nullish(v.array(EndpointSchema)),
  ports: v.nullish(v.array(SlicePortSchema)),
});
export type KubeEndpointSlice = v.InferOutput<typeof KubeEndpointSliceSchema>;

function parseWith<T>(schema: v.GenericSchema<unknown, T>, input: unknown): Result<T> {
  const result = v.safeParse(schema, input);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  return { ok: false, error: `${path ?? "(root)"}: ${issue?.message ?? "invalid"}` };
}

export function parseService(input: unknown): Result<KubeService> {
  return parseWith(KubeServiceSchema, input);
}

export function parseEndpointSlice(input: unknown): Result<KubeEndpointSlice> {
  return parseWith(KubeEndpointSliceSchema, input);
}

/** `metadata.namespace`, which manifests may omit: the API server's default then applies. */
export function namespaceOf(object: { metadata: { namespace?: string | null } }): string {
  return object.metadata.namespace ?? "default";
}

/** kubernetes.io/service-name: the label that ties a slice to its Service (KEP-0752). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
/** Multi-cluster Services API (KEP-1645): the cluster a slice was imported from. */
export const SOURCE_CLUSTER_LABEL = "multicluster.kubernetes.io/source-cluster";
