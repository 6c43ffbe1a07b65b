import { describe, expect, it } from "vitest";
import { decodeServiceRecord, serializeServiceRecord } from "../../../store/records.js";
import { exposeService, parseHosts, parsePathPrefix } from "../../../sync/translate/exposure.js";
import { endpoint, type ServicePort, service, slice, TERMINATING_SERVING } from "./fixtures.js";

const slices = [
  slice({
    name: "web-v4",
    ports: [
      { name: "http", port: 8080 },
      { name: "admin", port: 9000 },
      { name: "dns", port: 5353, protocol: "UDP" },
    ],
    endpoints: [endpoint("10.0.0.1", undefined, { zone: "zone-a" })],
  }),
  slice({
    name: "web-v6",
    addressType: "IPv6",
    ports: [{ name: "http", port: 8080 }],
    endpoints: [endpoint("fd00::1", TERMINATING_SERVING)],
  }),
];

/** Service shop/web with `annotations` and `ports` (one named http by default). */
const annotated = (annotations: Record<string, string> | null, ports?: ServicePort[]) =>
  service({ annotations, ports });

describe("parseHosts", () => {
  it.each([
    ["a single host", "shop.example", ["shop.example"]],
    ["trimmed, lower-cased items", " Shop.Example , API.shop.example ", ["shop.example", "api.shop.example"]],
    ["duplicates removed, first order kept", "b.example,a.example,B.example", ["b.example", "a.example"]],
    ["a trailing comma", "shop.example,", ["shop.example"]],
    ["a leading wildcard label", "*.shop.example", ["*.shop.example"]],
    ["a single-label host", "localhost", ["localhost"]],
  ])("accepts %s", (_case, raw, expected) => {
    expect(parseHosts(raw)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ["an empty value", "", "lists no host name"],
    ["only commas and spaces", " , ,", "lists no host name"],
    ["a port", "shop.example:8080", "is not a DNS host name"],
    ["an underscore", "shop_1.example", "is not a DNS host name"],
    ["a label starting with a hyphen", "-shop.example", "is not a DNS host name"],
    ["a trailing dot", "shop.example.", "is not a DNS host name"],
    ["a wildcard that is not the first label", "shop.*.example", "is not a DNS host name"],
    ["a wildcard over a top-level domain", "*.example", "needs at least two more labels"],
    ["an IPv4 literal", "10.0.0.1", "numeric top-level label"],
    ["a 64-character label", `${"a".repeat(64)}.example`, "is not a DNS host name"],
    ["a name over 253 characters", `${"a.".repeat(127)}example`, "longer than 253"],
  ])("rejects %s", (_case, raw, message) => {
    const result = parseHosts(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });
});

describe("parsePathPrefix", () => {
  it.each([
    ["absent → /", undefined, "/"],
    ["root", "/", "/"],
    ["a plain prefix", "/api", "/api"],
    ["a trailing slash dropped", "/api/", "/api"],
    ["several trailing slashes dropped", "/api/v1///", "/api/v1"],
    ["percent-encoding kept", "/caf%C3%A9", "/caf%C3%A9"],
  ])("accepts %s", (_case, raw, expected) => {
    expect(parsePathPrefix(raw)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ["a relative path", "api", 'must start with "/"'],
    ["an empty value", "", 'must start with "/"'],
    ["a query", "/api?x=1", "not allowed in a URL path"],
    ["a space", "/my api", "not allowed in a URL path"],
    ["a dot-dot segment", "/api/../admin", '".." segment'],
    ["an empty segment", "/api//v1", "empty segment"],
  ])("rejects %s", (_case, raw, message) => {
    const result = parsePathPrefix(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });
});

describe("exposeService", () => {
  it.each([
    ["no annotations", null],
    ["other annotations only", { other: "x" }],
  ])("leaves a Service without the hosts annotation unexposed: %s", (_case, annotations) => {
    expect(exposeService("east", annotated(annotations), slices)).toEqual({ kind: "not-exposed" });
  });

  it("builds a record for the only port with both families, which decodes as a valid record", () => {
    const result = exposeService("east", annotated({ "edgeslice.io/hosts": "Shop.Example" }), slices);
    expect(result).toEqual({
      kind: "exposed",
      record: {
        v: 1,
        cluster: "east",
        service: "shop/web",
        hosts: ["shop.example"],
        pathPrefix: "/",
        port: { name: "http", number: 80 },
        ipv4: { endpoints: [{ ip: "10.0.0.1", port: 8080, zone: "zone-a" }], fallback: false, draining: [] },
        ipv6: {
          endpoints: [{ ip: "fd00::1", port: 8080 }],
          fallback: true,
          draining: [{ ip: "fd00::1", port: 8080 }],
        },
      },
    });
    if (result.kind === "exposed") {
      expect(decodeServiceRecord(serializeServiceRecord(result.record))).toEqual({
        ok: true,
        value: result.record,
      });
    }
  });

  const twoPorts: ServicePort[] = [
    { name: "admin", port: 9000 },
    { name: "http", port: 80 },
  ];
  const withDns: ServicePort[] = [...twoPorts, { name: "dns", port: 53, protocol: "UDP" }];

  it.each([
    ["defaults to the port named http among several", {}, twoPorts, { name: "http", number: 80 }, "/"],
    [
      "picks a port by name",
      { "edgeslice.io/port": "admin" },
      twoPorts,
      { name: "admin", number: 9000 },
      "/",
    ],
    [
      "picks a port by number",
      { "edgeslice.io/port": " 9000 " },
      twoPorts,
      { name: "admin", number: 9000 },
      "/",
    ],
    ["uses the only port even if unnamed", {}, [{ port: 8080 }], { name: "", number: 8080 }, "/"],
    [
      "normalises the path prefix",
      { "edgeslice.io/path-prefix": "/shop/" },
      twoPorts,
      { name: "http", number: 80 },
      "/shop",
    ],
  ])("%s", (_case, extra, ports, port, pathPrefix) => {
    const result = exposeService(
      "east",
      annotated({ "edgeslice.io/hosts": "shop.example", ...extra }, ports),
      slices,
    );
    expect(result.kind).toBe("exposed");
    if (result.kind === "exposed") {
      expect(result.record.port).toEqual(port);
      expect(result.record.pathPrefix).toBe(pathPrefix);
    }
  });

  it.each([
    [
      "an empty hosts annotation",
      { "edgeslice.io/hosts": " " },
      twoPorts,
      "edgeslice.io/hosts: lists no host name",
    ],
    [
      "a bad host",
      { "edgeslice.io/hosts": "shop.example,bad_host" },
      twoPorts,
      'edgeslice.io/hosts: "bad_host"',
    ],
    ["a relative path prefix", { "edgeslice.io/path-prefix": "shop" }, twoPorts, "edgeslice.io/path-prefix:"],
    [
      "an unknown port name",
      { "edgeslice.io/port": "grpc" },
      twoPorts,
      'edgeslice.io/port: "grpc" names no port',
    ],
    [
      "an unknown port number",
      { "edgeslice.io/port": "8080" },
      twoPorts,
      'edgeslice.io/port: "8080" names no port',
    ],
    ["a UDP port", { "edgeslice.io/port": "dns" }, withDns, "edgeslice.io/port: port 53 is UDP"],
    [
      "no default port",
      {},
      [
        { name: "a", port: 1 },
        { name: "b", port: 2 },
      ],
      'none named "http"',
    ],
    ["a Service without ports", {}, [], "edgeslice.io/port: the Service has no ports"],
  ])("says which annotation is wrong for %s", (_case, extra, ports, reason) => {
    const result = exposeService(
      "east",
      annotated({ "edgeslice.io/hosts": "shop.example", ...extra } as Record<string, string>, ports),
      slices,
    );
    expect(result.kind).toBe("invalid");
    if (result.kind === "invalid") expect(result.reason).toContain(reason);
  });

  it("rejects a record the contract would not decode, such as a bad cluster name", () => {
    const result = exposeService("East_1", annotated({ "edgeslice.io/hosts": "shop.example" }), slices);
    expect(result.kind).toBe("invalid");
    if (result.kind === "invalid") expect(result.reason).toContain("cluster");
  });
});
