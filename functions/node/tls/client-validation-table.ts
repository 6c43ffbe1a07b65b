import type { ClientValidationMode } from "../../../store/client-validations.js";
import { type ClusterGrants, claimRank } from "../../core/trust/cluster-grants.js";

/**
 * Which client certificate validation a TLS handshake gets: pure, built once per change of the client
 * validation records (client-validation-source.ts) and read per connection, before its handshake.
 */

/** One Gateway port's validation, as a router serves it. */
export interface TableValidation {
  readonly cluster: string;
  /** `namespace/name:port`. */
  readonly id: string;
  /** `namespace/name` of the Gateway. */
  readonly gateway: string;
  readonly port: number;
  /** Lower-case names, `*.` wildcards among them. */
  readonly hostnames: readonly string[];
  /** A listener without hostname: every name on the port. */
  readonly anyHost: boolean;
  readonly mode: ClientValidationMode;
  /** The CA certificates, PEM. */
  readonly ca: string;
  /** sha256 of `ca`: a TLS context per (certificate, bundle) version. */
  readonly version: string;
}

export interface ClientValidationTable {
  /** The validations of the router's Gateways, by listener port. */
  readonly byPort: ReadonlyMap<number, readonly TableValidation[]>;
}

export const EMPTY_CLIENT_VALIDATION_TABLE: ClientValidationTable = { byPort: new Map() };

/** The table of `validations`, keeping only the Gateways this router implements (GATEWAYS; undefined: all). */
export function clientValidationTable(
  validations: readonly TableValidation[],
  gateways?: ReadonlySet<string>,
): ClientValidationTable {
  const byPort = new Map<number, TableValidation[]>();
  for (const validation of validations) {
    if (gateways && !gateways.has(validation.gateway)) continue;
    const list = byPort.get(validation.port) ?? [];
    list.push(validation);
    byPort.set(validation.port, list);
  }
  return { byPort };
}

/**
 * The validation a connection to Gateway listener `port` with SNI `serverName` gets, or undefined (no client
 * certificate is asked for). Among the validations of the port, the listener hostname that matches the name
 * most specifically decides, as it chooses the listener (an exact name, then the longest `*.` wildcard, which
 * covers one or more labels, then a listener without hostname); a tie goes to AllowValidOnly, never to the
 * weaker mode, then to the lower id. A client without SNI matches listeners without hostname only. Under
 * CLUSTER_GRANTS a cluster's validation applies only to names it was granted (`*` for a client without SNI),
 * as its certificates do: no cluster imposes or waives client certificates on another cluster's hosts.
 */
export function validationFor(
  table: ClientValidationTable,
  port: number,
  serverName: string | undefined,
  grants?: ClusterGrants,
): TableValidation | undefined {
  let best: TableValidation | undefined;
  let bestScore = -1;
  for (const validation of table.byPort.get(port) ?? []) {
    const score = matchScore(validation, serverName);
    if (score < 0) continue;
    if (grants && claimRank(grants, validation.cluster, serverName ?? "*") === undefined) continue;
    if (score > bestScore || (score === bestScore && best !== undefined && outranks(validation, best))) {
      best = validation;
      bestScore = score;
    }
  }
  return best;
}

/** How specifically one of the validation's listener hostnames matches the name; -1: none does. */
function matchScore(validation: TableValidation, serverName: string | undefined): number {
  let score = validation.anyHost ? 0 : -1;
  if (serverName === undefined) return score;
  for (const hostname of validation.hostnames) {
    if (hostname === serverName) return 1_000;
    if (
      hostname.startsWith("*.") &&
      serverName.endsWith(hostname.slice(1)) &&
      serverName.length > hostname.length - 1
    ) {
      score = Math.max(score, hostname.length);
    }
  }
  return score;
}

function outranks(a: TableValidation, b: TableValidation): boolean {
  if (a.mode !== b.mode) return a.mode === "AllowValidOnly";
  return a.id < b.id;
}
