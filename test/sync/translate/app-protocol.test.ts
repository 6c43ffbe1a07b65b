import { describe, expect, it } from "vitest";
import { decodeServiceRecordV2, serializeServiceRecordV2 } from "../../../store/services.js";
import { appProtocolChoice } from "../../../sync/translate/app-protocol.js";
import { serviceRecordOf } from "../../../sync/translate/service-record.js";
import { endpoint, service, slice } from "./fixtures.js";
import { service as gatewayService, httpRoute, parentConditions, translate } from "./gateway/fixtures.js";

describe("a Service port's appProtocol", () => {
  it.each<[string, string | null | undefined, ReturnType<typeof appProtocolChoice>]>([
    [
      "kubernetes.io/h2c asks for HTTP/2 with prior knowledge",
      "kubernetes.io/h2c",
      { supported: true, protocol: "h2c" },
    ],
    [
      "kubernetes.io/ws keeps WebSocket over HTTP/1.1",
      "kubernetes.io/ws",
      { supported: true, protocol: "ws" },
    ],
    ["none is HTTP/1.1", undefined, { supported: true, protocol: undefined }],
    ["null is HTTP/1.1", null, { supported: true, protocol: undefined }],
    ["a value of no standard (http) is HTTP/1.1", "http", { supported: true, protocol: undefined }],
    ["a vendor's value is HTTP/1.1", "example.com/custom", { supported: true, protocol: undefined }],
    ["kubernetes.io/h2c is compared exactly", "Kubernetes.io/H2C", { supported: true, protocol: undefined }],
  ])("%s", (_case, appProtocol, expected) => {
    expect(appProtocolChoice(appProtocol)).toEqual(expected);
  });

  it("refuses WebSocket over TLS (kubernetes.io/wss), which the router cannot speak to backends", () => {
    expect(appProtocolChoice("kubernetes.io/wss")).toMatchObject({ supported: false });
  });
});

describe("the protocol in the service record", () => {
  const slices = [
    slice({
      name: "web-1",
      ports: [
        { name: "http", port: 8080, protocol: "TCP" },
        { name: "grpc", port: 9090, protocol: "TCP" },
        { name: "ws", port: 7070, protocol: "TCP" },
        { name: "wss", port: 7443, protocol: "TCP" },
      ],
      endpoints: [endpoint("10.0.0.1")],
    }),
  ];
  const web = service({
    ports: [
      { name: "http", port: 80 },
      { name: "grpc", port: 90, appProtocol: "kubernetes.io/h2c" },
      { name: "ws", port: 70, appProtocol: "kubernetes.io/ws" },
      { name: "wss", port: 443, appProtocol: "kubernetes.io/wss" },
    ],
  });
  const record = serviceRecordOf("east", web, slices, new Set([80, 90, 70, 443]));
  const ports = record.ok ? (record.value?.ports ?? []) : [];

  it.each<[string, number, string | undefined]>([
    ["a port without appProtocol has none (HTTP/1.1)", 80, undefined],
    ["an h2c port says h2c", 90, "h2c"],
    ["a ws port says ws", 70, "ws"],
    ["a wss port has none: a route to it is refused", 443, undefined],
  ])("%s", (_case, number, protocol) => {
    const port = ports.find((candidate) => candidate.number === number);
    expect(port?.ipv4.endpoints).toHaveLength(1);
    expect(port?.protocol).toBe(protocol);
  });

  it("round-trips through the stored form, and a record without the field still decodes", () => {
    if (!record.ok || !record.value) throw new Error("no record");
    const decoded = decodeServiceRecordV2(serializeServiceRecordV2(record.value));
    expect(decoded.ok && decoded.value.ports.map((port) => port.protocol)).toEqual([
      "ws",
      undefined,
      "h2c",
      undefined,
    ]);
    const older = JSON.stringify({ v: 2, cluster: "east", service: "shop/web", ports: [] });
    expect(decodeServiceRecordV2(older).ok).toBe(true);
  });

  it("refuses a record with a protocol this router does not know", () => {
    const newer = JSON.stringify({
      v: 2,
      cluster: "east",
      service: "shop/web",
      ports: [
        {
          name: "",
          number: 80,
          protocol: "h3",
          ipv4: { endpoints: [], fallback: false, draining: [] },
          ipv6: { endpoints: [], fallback: false, draining: [] },
        },
      ],
    });
    expect(decodeServiceRecordV2(newer).ok).toBe(false);
  });
});

describe("a backendRef to a port of an unsupported protocol", () => {
  it("is invalid and reported UnsupportedProtocol", () => {
    const result = translate({
      httpRoutes: [httpRoute("web", { rules: [{ backendRefs: [{ name: "tls-ws", port: 8443 }] }] })],
      services: [
        gatewayService("tls-ws", "infra", [{ name: "wss", port: 8443, appProtocol: "kubernetes.io/wss" }]),
      ],
    });
    expect(result.routes[0]?.rules[0]?.backends).toEqual([
      { invalid: expect.stringMatching(/^UnsupportedProtocol: /), weight: 1 },
    ]);
    expect(parentConditions(result, "infra/web")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/UnsupportedProtocol",
    ]);
  });
});
