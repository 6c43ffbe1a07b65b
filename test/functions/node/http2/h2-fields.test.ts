import { describe, expect, it } from "vitest";
import { h2RequestFields } from "../../../../functions/node/h2c/h2c-request.js";
import { h2FieldsOf, http1FieldsOf } from "../../../../functions/node/http2-front/h2-fields.js";
import type { OutgoingRequest } from "../../../../lib/http-exchange.js";

describe("h2FieldsOf (a response head or trailers as HTTP/2 sends them)", () => {
  it.each([
    ["Connection", "keep-alive"],
    ["Keep-Alive", "timeout=5"],
    ["Proxy-Connection", "keep-alive"],
    ["Transfer-Encoding", "chunked"],
    ["Upgrade", "h2c"],
    ["TE", "trailers"],
  ])("leaves out the connection-specific field %s", (name, value) => {
    expect(h2FieldsOf(200, [name, value, "x-kept", "yes"])).toEqual([":status", "200", "x-kept", "yes"]);
  });

  it("lower-cases names and keeps repeated fields, in order", () => {
    expect(h2FieldsOf(204, ["Set-Cookie", "a=1", "content-type", "text/plain", "set-cookie", "b=2"])).toEqual(
      [":status", "204", "set-cookie", "a=1", "content-type", "text/plain", "set-cookie", "b=2"],
    );
  });

  it("leaves out pseudo-header fields whatever put them in, and has no :status for trailers", () => {
    expect(h2FieldsOf(undefined, [":status", "200", "grpc-status", "0"])).toEqual(["grpc-status", "0"]);
  });
});

describe("h2RequestFields (an upstream request as HTTP/2 fields)", () => {
  const target = { ip: "10.0.0.7", port: 8080, protocol: "h2c" as const };
  const request = (headers: string[], more: Partial<OutgoingRequest> = {}): OutgoingRequest => ({
    method: "POST",
    path: "/svc.Echo/Call",
    headers,
    body: null,
    contentLength: undefined,
    transferCodings: undefined,
    ...more,
  });

  it.each<[string, OutgoingRequest, string[]]>([
    [
      "pseudo-header fields first, Host as :authority, names lowercase",
      request(["Host", "api.example", "X-Trace", "1"]),
      [
        ":method",
        "POST",
        ":scheme",
        "http",
        ":authority",
        "api.example",
        ":path",
        "/svc.Echo/Call",
        "x-trace",
        "1",
      ],
    ],
    [
      "no connection-specific field, no client Content-Length: the declared length instead",
      request(
        ["host", "a", "connection", "close", "keep-alive", "5", "content-length", "9", "upgrade", "x"],
        {
          contentLength: 3,
        },
      ),
      [
        ":method",
        "POST",
        ":scheme",
        "http",
        ":authority",
        "a",
        ":path",
        "/svc.Echo/Call",
        "content-length",
        "3",
      ],
    ],
    [
      "TE: trailers added to a gRPC call",
      request(["host", "a", "content-type", "application/grpc+proto"]),
      [
        ":method",
        "POST",
        ":scheme",
        "http",
        ":authority",
        "a",
        ":path",
        "/svc.Echo/Call",
        "content-type",
        "application/grpc+proto",
        "te",
        "trailers",
      ],
    ],
    [
      "the backend's address as :authority when no Host was given",
      request([]),
      [":method", "POST", ":scheme", "http", ":authority", "10.0.0.7:8080", ":path", "/svc.Echo/Call"],
    ],
  ])("%s", (_, outgoing, expected) => {
    expect(h2RequestFields(outgoing, target)).toEqual(expected);
  });
});

describe("http1FieldsOf", () => {
  it.each([
    [
      [":method", "GET", ":path", "/", ":authority", "a.example", "x-a", "1"],
      ["x-a", "1"],
    ],
    [
      ["cookie", "a=1", "x-a", "1", "Cookie", "b=2"],
      ["x-a", "1", "cookie", "a=1; b=2"],
    ],
    [[":scheme", "http"], []],
  ])("turns %j into %j", (raw, fields) => {
    expect(http1FieldsOf(raw)).toEqual(fields);
  });
});
