import { describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { parseGatewayNames } from "../../../functions/core/settings/gateway-names.js";

describe("GATEWAYS", () => {
  it("reads a comma list of namespace/name into the router's Gateways", () => {
    const config = parseRouterConfig({ GATEWAYS: " infra/public, infra/internal ,infra/public" });
    expect([...(config.gateways ?? [])]).toEqual(["infra/public", "infra/internal"]);
  });

  it("leaves the router serving every Gateway when unset", () => {
    expect(parseRouterConfig({}).gateways).toBeUndefined();
  });

  it.each([
    ["a name without its namespace", "public", "is not namespace/name"],
    ["upper case", "Infra/Public", "is not namespace/name"],
    ["nothing but commas", ",,", "no Gateway named"],
  ])("refuses %s", (_case, text, message) => {
    const parsed = parseGatewayNames(text);
    expect(parsed.ok ? "" : parsed.error).toContain(message);
    expect(() => parseRouterConfig({ GATEWAYS: text })).toThrow(/GATEWAYS must be namespace\/name/);
  });
});
