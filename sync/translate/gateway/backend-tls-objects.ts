import * as v from "valibot";
import { ObjectMetaSchema, parseWith } from "./objects.js";

/**
 * BackendTLSPolicy (gateway.networking.k8s.io/v1) as the sync reads it: its targets, the validation of the
 * backends' certificates, and its options (read, not applied). Loose, with plain strings: a value this
 * version does not take becomes a condition on the policy, never a parse failure. The CRD's CEL rules (one of
 * caCertificateRefs and wellKnownCACertificates) are checked again by the translation, for manifests read
 * from a folder.
 */
const text = v.nullish(v.string());

const LocalRefSchema = v.looseObject({ group: text, kind: text, name: v.string() });

export const BackendTLSPolicySchema = v.looseObject({
  metadata: ObjectMetaSchema,
  spec: v.looseObject({
    targetRefs: v.nullish(
      v.array(v.looseObject({ group: text, kind: text, name: v.string(), sectionName: text })),
    ),
    validation: v.looseObject({
      caCertificateRefs: v.nullish(v.array(LocalRefSchema)),
      wellKnownCACertificates: text,
      hostname: v.string(),
      subjectAltNames: v.nullish(v.array(v.looseObject({ type: v.string(), hostname: text, uri: text }))),
    }),
    options: v.nullish(v.record(v.string(), v.string())),
  }),
});
export type BackendTLSPolicy = v.InferOutput<typeof BackendTLSPolicySchema>;
export type PolicyTargetRef = NonNullable<BackendTLSPolicy["spec"]["targetRefs"]>[number];

export const parseBackendTLSPolicy = (input: unknown) => parseWith(BackendTLSPolicySchema, input);
