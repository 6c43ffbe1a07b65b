import { describeSecretGrantConformance } from "./support/secret-grants.js";

/** Conformance GatewaySecretMissingReferenceGrant: without a ReferenceGrant the Secret of another namespace is refused. */
describeSecretGrantConformance("GatewaySecretMissingReferenceGrant", { grants: [], granted: false });
