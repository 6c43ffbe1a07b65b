import { describe, expect, it } from "vitest";
import { gateway, httpRoute, listener, toService, translate } from "./fixtures.js";

/** Which listeners a route record names: what lets a router keep Gateways and listener ports apart. */
describe("the listeners a route record is attached through", () => {
  const ports = gateway({
    name: "ports",
    listeners: [
      listener("http", { port: 80 }),
      listener("http-8080", { port: 8080, hostname: "*.example.com" }),
      listener("http-8090", { port: 8090, hostname: "*.example.com" }),
      listener("http-8090-foo", { port: 8090, hostname: "foo.example.org" }),
    ],
  });
  const other = gateway({ name: "other" });
  const listenersOf = (spec: Record<string, unknown>) => {
    const result = translate({
      gateways: [ports, other],
      httpRoutes: [httpRoute("r", { ...toService("infra-backend-v1"), ...spec })],
    });
    return result.routes[0]?.listeners;
  };

  it.each([
    [
      "a parentRef port names that port's listener only",
      { parentRefs: [{ name: "ports", port: 8080 }], hostnames: ["a.example.com"] },
      [
        {
          gateway: "infra/ports",
          port: 8080,
          listenerHostname: "*.example.com",
          hostnames: ["a.example.com"],
        },
      ],
    ],
    [
      "a sectionName names its listener, with the listener's hostname when the route has none",
      { parentRefs: [{ name: "ports", sectionName: "http-8090-foo" }] },
      [
        {
          gateway: "infra/ports",
          port: 8090,
          listenerHostname: "foo.example.org",
          hostnames: ["foo.example.org"],
        },
      ],
    ],
    [
      "two listeners on one port, each with its own hostname (listener isolation)",
      { parentRefs: [{ name: "ports", port: 8090 }] },
      [
        {
          gateway: "infra/ports",
          port: 8090,
          listenerHostname: "*.example.com",
          hostnames: ["*.example.com"],
        },
        {
          gateway: "infra/ports",
          port: 8090,
          listenerHostname: "foo.example.org",
          hostnames: ["foo.example.org"],
        },
      ],
    ],
    [
      "a listener without hostname serves every host (empty list)",
      { parentRefs: [{ name: "other" }] },
      [{ gateway: "infra/other", port: 80, hostnames: [] }],
    ],
    [
      "two Gateways, each by name, sorted",
      { parentRefs: [{ name: "other" }, { name: "ports", sectionName: "http" }] },
      [
        { gateway: "infra/other", port: 80, hostnames: [] },
        { gateway: "infra/ports", port: 80, hostnames: [] },
      ],
    ],
  ])("%s", (_case, spec, expected) => {
    expect(listenersOf(spec)).toEqual(expected);
  });
});
