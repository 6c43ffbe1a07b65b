import type { RouteRecord } from "../../../store/routes.js";
import { wildcardCovers } from "../http/hosts.js";
import { matchRoute, type RouteMatchResult, type RouteTable } from "./route-table.js";

const NO_HEADERS = { get: () => null };

/**
 * The TLSRoute that takes a TLS connection, from its ClientHello's server name and the Gateway listener port
 * it was made to, or undefined. The table holds TLSRoutes only (route-table.ts RouteTableKind). The rules are
 * those of the Gateway API for any route: listener isolation (among one Gateway's listeners on the port, the
 * most specific hostname takes the name), an exact hostname before the longest wildcard, then the oldest
 * route (TLSRoute conflicts: "the oldest Route based on creation timestamp"). A connection without a server
 * name, or to a port no TLS listener of the table uses, is nobody's.
 */
export function matchPassthrough<T extends { readonly route: RouteRecord }>(
  table: RouteTable<T>,
  serverName: string | undefined,
  listenerPort: number,
): RouteMatchResult<T> | undefined {
  if (serverName === undefined || !table.listenerPorts.has(listenerPort)) return undefined;
  const found = matchRoute(table, serverName, {
    path: "/",
    method: "GET",
    headers: NO_HEADERS,
    port: listenerPort,
    serverName,
  });
  if (!found || (found.hostname !== undefined && !wildcardCovers(found.hostname, serverName)))
    return undefined;
  return found;
}
