import { describeSecretGrantConformance, secretGrant } from "./support/secret-grants.js";

/** Conformance GatewaySecretReferenceGrantSpecific: a ReferenceGrant naming the one Secret allows it. */
describeSecretGrantConformance("GatewaySecretReferenceGrantSpecific", {
  grants: [secretGrant("reference-grant-specific", { name: "certificate" })],
  granted: true,
});
