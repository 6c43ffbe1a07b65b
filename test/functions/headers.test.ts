import { describe, expect, it } from "vitest";
import {
  downstreamResponseHeaderObject,
  downstreamResponseHeaders,
  forwardedElement,
  upstreamRequestHeaderList,
  upstreamRequestHeaders,
} from "../../functions/headers.js";

const info = { clientIp: "192.0.2.7", proto: "https" as const, host: "app.example" };

describe("upstreamRequestHeaders", () => {
  it.each([
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "proxy-authorization",
    "expect",
  ])("drops %s", (name) => {
    const incoming = new Headers({ [name]: "x", accept: "text/plain" });
    const out = upstreamRequestHeaders(incoming, info);
    expect(out.has(name)).toBe(false);
    expect(out.get("accept")).toBe("text/plain");
  });

  it("drops the headers named in Connection", () => {
    const incoming = new Headers({
      connection: "close, X-Secret , x-other",
      "x-secret": "1",
      "x-other": "2",
      "x-kept": "3",
    });
    const out = upstreamRequestHeaders(incoming, info);
    expect([out.has("x-secret"), out.has("x-other"), out.get("x-kept")]).toEqual([false, false, "3"]);
  });

  it("keeps the original Host", () => {
    expect(
      upstreamRequestHeaders(new Headers({ host: "app.example:8443" }), {
        ...info,
        host: "app.example:8443",
      }).get("host"),
    ).toBe("app.example:8443");
  });

  it.each([
    [undefined, "192.0.2.7"],
    ["203.0.113.1", "203.0.113.1, 192.0.2.7"],
  ])("appends the client to X-Forwarded-For %j", (previous, expected) => {
    const incoming = new Headers(previous ? { "x-forwarded-for": previous } : {});
    expect(upstreamRequestHeaders(incoming, info).get("x-forwarded-for")).toBe(expected);
  });

  it("overwrites client-sent X-Forwarded-Proto and X-Forwarded-Host", () => {
    const incoming = new Headers({ "x-forwarded-proto": "gopher", "x-forwarded-host": "evil.example" });
    const out = upstreamRequestHeaders(incoming, info);
    expect([out.get("x-forwarded-proto"), out.get("x-forwarded-host")]).toEqual(["https", "app.example"]);
  });

  it("appends an element to Forwarded", () => {
    const out = upstreamRequestHeaders(new Headers({ forwarded: "for=203.0.113.1" }), info);
    expect(out.get("forwarded")).toBe("for=203.0.113.1, for=192.0.2.7;host=app.example;proto=https");
  });
});

describe("forwardedElement (RFC 7239)", () => {
  it.each([
    ["192.0.2.7", "app.example", "for=192.0.2.7;host=app.example;proto=http"],
    ["2001:db8::1", "app.example", 'for="[2001:db8::1]";host=app.example;proto=http'],
    [undefined, "app.example:8080", 'for=unknown;host="app.example:8080";proto=http'],
  ])("for %j and host %j is %s", (clientIp, host, expected) => {
    expect(forwardedElement({ clientIp, host, proto: "http" })).toBe(expected);
  });
});

describe("downstreamResponseHeaders", () => {
  it("strips hop-by-hop and Connection-listed headers and keeps every Set-Cookie apart", () => {
    const upstream = new Headers([
      ["connection", "x-internal"],
      ["x-internal", "1"],
      ["keep-alive", "timeout=5"],
      ["transfer-encoding", "chunked"],
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
      ["content-type", "text/plain"],
    ]);
    const out = downstreamResponseHeaders(upstream);
    expect([...new Set(out.keys())].sort()).toEqual(["content-type", "set-cookie"]);
    expect(out.getSetCookie()).toEqual(["a=1", "b=2"]);
  });
});

/** Both representations of the request rules must agree: one rule set, two header shapes. */
describe("upstreamRequestHeaderList (Node rawHeaders) agrees with upstreamRequestHeaders", () => {
  const asPairs = (list: string[]) => {
    const pairs: [string, string][] = [];
    for (let i = 0; i < list.length; i += 2) pairs.push([list[i] ?? "", list[i + 1] ?? ""]);
    return pairs.sort(([a], [b]) => a.localeCompare(b));
  };
  const fromWeb = (raw: string[]) => {
    const incoming = new Headers();
    for (let i = 0; i < raw.length; i += 2) incoming.append(raw[i] ?? "", raw[i + 1] ?? "");
    return [...upstreamRequestHeaders(incoming, info).entries()].sort(([a], [b]) => a.localeCompare(b));
  };

  it.each([
    [
      "hop-by-hop fields",
      ["Connection", "keep-alive", "Keep-Alive", "timeout=5", "TE", "trailers", "Accept", "a"],
    ],
    ["Connection-listed fields", ["Connection", "X-Secret, close", "X-Secret", "1", "X-Kept", "2"]],
    ["Expect and Upgrade", ["Expect", "100-continue", "Upgrade", "websocket", "Content-Length", "3"]],
    [
      "client forwarding fields",
      [
        "X-Forwarded-For",
        "203.0.113.1",
        "Forwarded",
        "for=203.0.113.1",
        "X-Forwarded-Proto",
        "gopher",
        "X-Forwarded-Host",
        "evil.example",
      ],
    ],
    ["repeated X-Forwarded-For lines", ["X-Forwarded-For", "203.0.113.1", "X-Forwarded-For", "203.0.113.2"]],
    ["a client Host", ["Host", "other.example", "Proxy-Authorization", "Basic x"]],
  ])("for %s", (_what, raw) => {
    expect(asPairs(upstreamRequestHeaderList(raw, info))).toEqual(fromWeb(raw));
  });

  it("lowercases names and keeps repeated ordinary fields as separate lines", () => {
    const out = upstreamRequestHeaderList(["Accept", "a", "X-Multi", "1", "X-Multi", "2"], info);
    expect(out.slice(0, 6)).toEqual(["accept", "a", "x-multi", "1", "x-multi", "2"]);
  });
});

describe("downstreamResponseHeaderObject (Node header object)", () => {
  it("strips hop-by-hop and Connection-listed fields and keeps repeated Set-Cookie apart", () => {
    const out = downstreamResponseHeaderObject({
      connection: "keep-alive, X-Internal",
      "x-internal": "1",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      "set-cookie": ["a=1", "b=2"],
      "content-type": "text/plain",
    });
    expect(out).toEqual({ "set-cookie": ["a=1", "b=2"], "content-type": "text/plain" });
  });
});
