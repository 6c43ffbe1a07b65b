import { describeSecretGrantConformance, secretGrant } from "./support/secret-grants.js";

/**
 * Conformance GatewaySecretInvalidReferenceGrant: a ReferenceGrant to another Secret of the namespace does not
 * allow this one.
 */
describeSecretGrantConformance("GatewaySecretInvalidReferenceGrant", {
  grants: [secretGrant("reference-grant-wrong-secret", { name: "not-the-certificate" })],
  granted: false,
});
