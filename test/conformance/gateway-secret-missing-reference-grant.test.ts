import { crossNamespaceListener, describeSecretGrantConformance } from "./support/secret-grants.js";

/** Conformance GatewaySecretMissingReferenceGrant: without a ReferenceGrant the Secret of another namespace is refused. */
describeSecretGrantConformance("GatewaySecretMissingReferenceGrant", {
  grants: [],
  granted: false,
  // Refused whether or not the Secret exists.
  moreListeners: [
    crossNamespaceListener("https-nonexistent-secret", "nonexistent-certificate", {
      hostname: "nonexistent.example.com",
    }),
  ],
});
