import type { Result } from "../../../lib/result.js";

const NAME = "[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?";
const GATEWAY = new RegExp(`^${NAME}/${NAME}$`);

/**
 * GATEWAYS: the Gateways a router implements, `namespace/name` comma-separated, e.g.
 * `infra/public,infra/internal`. Routers in front of different addresses serve different Gateways; one
 * router may serve several, told apart by listener port (routes/listener-ports.ts).
 */
export function parseGatewayNames(text: string): Result<ReadonlySet<string>> {
  const names = new Set<string>();
  for (const raw of text.split(",")) {
    const name = raw.trim();
    if (name === "") continue;
    if (!GATEWAY.test(name)) return { ok: false, error: `"${name}" is not namespace/name of a Gateway` };
    names.add(name);
  }
  if (names.size === 0) return { ok: false, error: "no Gateway named" };
  return { ok: true, value: names };
}
