import * as v from "valibot";
import { ObjectMetaSchema, parseWith } from "../gateway/objects.js";

/**
 * The parts of IngressClass and Ingress (networking.k8s.io/v1) that edgeslice reads, validated at the
 * boundary. Loose objects, enums as plain strings (an unknown pathType is reported, not a parse failure),
 * `null` and absent alike. The same shapes come from raw JSON and from client-node's typed API
 * (creationTimestamp then is a Date).
 */
const text = v.nullish(v.string());

export const IngressClassSchema = v.looseObject({
  metadata: ObjectMetaSchema,
  spec: v.nullish(v.looseObject({ controller: text, parameters: v.nullish(v.looseObject({})) })),
});
export type IngressClass = v.InferOutput<typeof IngressClassSchema>;

const IngressBackendSchema = v.looseObject({
  service: v.nullish(
    v.looseObject({
      name: v.string(),
      port: v.nullish(v.looseObject({ name: text, number: v.nullish(v.number()) })),
    }),
  ),
  resource: v.nullish(v.looseObject({})),
});
export type IngressBackend = v.InferOutput<typeof IngressBackendSchema>;

const IngressPathSchema = v.looseObject({ path: text, pathType: text, backend: IngressBackendSchema });
export type IngressPath = v.InferOutput<typeof IngressPathSchema>;

export const IngressSchema = v.looseObject({
  metadata: ObjectMetaSchema,
  spec: v.nullish(
    v.looseObject({
      ingressClassName: text,
      defaultBackend: v.nullish(IngressBackendSchema),
      rules: v.nullish(
        v.array(
          v.looseObject({
            host: text,
            http: v.nullish(v.looseObject({ paths: v.nullish(v.array(IngressPathSchema)) })),
          }),
        ),
      ),
    }),
  ),
});
export type Ingress = v.InferOutput<typeof IngressSchema>;

export const parseIngressClass = (input: unknown) => parseWith(IngressClassSchema, input);
export const parseIngress = (input: unknown) => parseWith(IngressSchema, input);
