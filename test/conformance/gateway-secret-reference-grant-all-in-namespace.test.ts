import { describeSecretGrantConformance, secretGrant } from "./support/secret-grants.js";

/** Conformance GatewaySecretReferenceGrantAllInNamespace: a ReferenceGrant to every Secret of the namespace. */
describeSecretGrantConformance("GatewaySecretReferenceGrantAllInNamespace", {
  grants: [secretGrant("reference-grant-all-in-namespace", {})],
  granted: true,
});
