import { ipBytes } from "../../../lib/ip.js";
import type { Result } from "../../../lib/result.js";

/** One entry of Gateway `status.addresses` (gateway.networking.k8s.io/v1 GatewayStatusAddress). */
export interface GatewayAddress {
  readonly type: "IPAddress" | "Hostname";
  readonly value: string;
}

/**
 * GATEWAY_ADDRESSES: where clients reach the routers that serve a Gateway, e.g.
 * `203.0.113.10,edge.example.com` (every Gateway of ours) or
 * `edgeslice=203.0.113.10; infra/internal=10.0.0.80` (per GatewayClass name, per Gateway `namespace/name`).
 * The routers sit behind whatever the operator chose (a cloud load balancer, Cloudflare, a node port), which
 * the sync cannot observe, so the operator states it; the most specific entry wins: Gateway, class, default.
 */
export interface GatewayAddressSettings {
  readonly byGateway: ReadonlyMap<string, readonly GatewayAddress[]>;
  readonly byClass: ReadonlyMap<string, readonly GatewayAddress[]>;
  readonly fallback: readonly GatewayAddress[];
}

export const NO_GATEWAY_ADDRESSES: GatewayAddressSettings = {
  byGateway: new Map(),
  byClass: new Map(),
  fallback: [],
};

const NAME = "[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?";
const CLASS_KEY = new RegExp(`^${NAME}$`);
const GATEWAY_KEY = new RegExp(`^${NAME}/${NAME}$`);
const HOSTNAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Parses GATEWAY_ADDRESSES; unset or blank is no address anywhere. */
export function parseGatewayAddresses(text: string | undefined): Result<GatewayAddressSettings> {
  if (text === undefined || text.trim() === "") return { ok: true, value: NO_GATEWAY_ADDRESSES };
  const byGateway = new Map<string, GatewayAddress[]>();
  const byClass = new Map<string, GatewayAddress[]>();
  let fallback: GatewayAddress[] = [];
  for (const entry of text.split(";")) {
    if (entry.trim() === "") continue;
    const equals = entry.indexOf("=");
    const key = equals < 0 ? undefined : entry.slice(0, equals).trim();
    const addresses = addressListOf(entry.slice(equals + 1));
    if (!addresses.ok) return addresses;
    if (addresses.value.length === 0) return { ok: false, error: `"${entry.trim()}" lists no address` };
    if (key === undefined) fallback = addresses.value;
    else if (GATEWAY_KEY.test(key)) byGateway.set(key, addresses.value);
    else if (CLASS_KEY.test(key)) byClass.set(key, addresses.value);
    else
      return { ok: false, error: `"${key}" is neither a GatewayClass name nor namespace/name of a Gateway` };
  }
  return { ok: true, value: { byGateway, byClass, fallback } };
}

/** The comma-separated addresses of one entry, lower-cased, each once, in the order written. */
function addressListOf(text: string): Result<GatewayAddress[]> {
  const addresses: GatewayAddress[] = [];
  for (const raw of text.split(",")) {
    const item = raw.trim().toLowerCase();
    if (item === "") continue;
    const address = addressOf(item);
    if (address === undefined) return { ok: false, error: `"${item}" is not an IP address or a DNS name` };
    if (!addresses.some((known) => known.value === address.value)) addresses.push(address);
  }
  return { ok: true, value: addresses };
}

/** The addresses of Gateway `key` (`namespace/name`) of class `className`: the most specific entry. */
export function addressesOf(
  settings: GatewayAddressSettings,
  key: string,
  className: string,
): readonly GatewayAddress[] {
  return settings.byGateway.get(key) ?? settings.byClass.get(className) ?? settings.fallback;
}

function addressOf(item: string): GatewayAddress | undefined {
  if (ipBytes(item) !== undefined) return { type: "IPAddress", value: item };
  if (HOSTNAME.test(item) && item.length <= 253) return { type: "Hostname", value: item };
  return undefined;
}
