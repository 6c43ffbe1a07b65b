import { describe, expect, it } from "vitest";
import {
  downstreamResponseHeaderObject,
  downstreamResponseHeaders,
  forwardedElement,
  isWebSocketUpgrade,
  upgradeResponseHeaderList,
  upstreamRequestHeaderList,
  upstreamRequestHeaders,
  upstreamUpgradeHeaderList,
  upstreamUpgradeHeaders,
} from "../../../functions/core/headers.js";

const info = { clientIp: "192.0.2.7", proto: "https" as const, host: "app.example" };

/** Forwarding fields a client sends itself (raw header list): appended to, or replaced by, the router's. */
const CLIENT_FORWARDING_FIELDS = [
  "X-Forwarded-For",
  "203.0.113.1",
  "Forwarded",
  "for=203.0.113.1",
  "X-Forwarded-Proto",
  "gopher",
  "X-Forwarded-Host",
  "evil.example",
];

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
    ["client forwarding fields", CLIENT_FORWARDING_FIELDS],
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

/** What the request rules add after the client's fields, for `info`. */
const forwardingOf = (xff = "192.0.2.7", forwarded = "for=192.0.2.7;host=app.example;proto=https") => [
  "host",
  "app.example",
  "x-forwarded-for",
  xff,
  "x-forwarded-proto",
  "https",
  "x-forwarded-host",
  "app.example",
  "forwarded",
  forwarded,
];

describe("upstreamUpgradeHeaderList (an upgrade request, from Node rawHeaders)", () => {
  it.each([
    [
      "a WebSocket handshake keeps Upgrade and its Sec-WebSocket fields and names upgrade in Connection",
      [
        "Host",
        "app.example",
        "Connection",
        "Upgrade",
        "Upgrade",
        "websocket",
        "Sec-WebSocket-Key",
        "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version",
        "13",
      ],
      [
        "upgrade",
        "websocket",
        "sec-websocket-key",
        "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version",
        "13",
        ...forwardingOf(),
        "connection",
        "upgrade",
      ],
    ],
    [
      "Upgrade is kept when Connection lists it among other options",
      ["Connection", "keep-alive, Upgrade", "Upgrade", "websocket"],
      ["upgrade", "websocket", ...forwardingOf(), "connection", "upgrade"],
    ],
    [
      "every other hop-by-hop field, Connection-listed fields and Expect are dropped",
      [
        "Connection",
        "Upgrade, X-Secret",
        "Upgrade",
        "h2c",
        "X-Secret",
        "1",
        "Keep-Alive",
        "timeout=5",
        "TE",
        "trailers",
        "Proxy-Authorization",
        "Basic eDp5",
        "HTTP2-Settings",
        "AAMAAABkAAQAoAAAAAIAAAAA",
        "Transfer-Encoding",
        "chunked",
        "Expect",
        "100-continue",
        "Accept",
        "*/*",
      ],
      ["upgrade", "h2c", "accept", "*/*", ...forwardingOf(), "connection", "upgrade"],
    ],
    [
      "client forwarding fields are appended to or replaced as for any request",
      ["Upgrade", "websocket", ...CLIENT_FORWARDING_FIELDS, "Host", "evil.example"],
      [
        "upgrade",
        "websocket",
        ...forwardingOf(
          "203.0.113.1, 192.0.2.7",
          "for=203.0.113.1, for=192.0.2.7;host=app.example;proto=https",
        ),
        "connection",
        "upgrade",
      ],
    ],
  ])("%s", (_what, raw, expected) => {
    expect(upstreamUpgradeHeaderList(raw, info)).toEqual(expected);
  });

  it.each([
    ["a WebSocket handshake", ["Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Key", "k"]],
    [
      "listed and hop-by-hop fields",
      ["Connection", "Upgrade, X-Secret", "Upgrade", "websocket", "X-Secret", "1", "TE", "x"],
    ],
    [
      "client forwarding fields",
      ["Upgrade", "websocket", "X-Forwarded-For", "203.0.113.1", "Forwarded", "for=x"],
    ],
  ])("agrees with the web Headers version (upstreamUpgradeHeaders) for %s", (_what, raw) => {
    const incoming = new Headers();
    for (let i = 0; i < raw.length; i += 2) incoming.append(raw[i] ?? "", raw[i + 1] ?? "");
    const pairs = (list: string[]) => {
      const out: [string, string][] = [];
      for (let i = 0; i < list.length; i += 2) out.push([list[i] ?? "", list[i + 1] ?? ""]);
      return out.sort(([a], [b]) => a.localeCompare(b));
    };
    const web = [...upstreamUpgradeHeaders(incoming, info).entries()].sort(([a], [b]) => a.localeCompare(b));
    expect(pairs(upstreamUpgradeHeaderList(raw, info))).toEqual(web);
  });

  it("leaves the ordinary request rule alone: Upgrade is still dropped there", () => {
    const raw = ["Connection", "Upgrade", "Upgrade", "websocket"];
    expect(upstreamRequestHeaderList(raw, info)).toEqual(forwardingOf());
  });
});

describe("upgradeResponseHeaderList (a backend's answer to an upgrade, from Node rawHeaders)", () => {
  it.each([
    [
      "a 101 keeps Upgrade and Sec-WebSocket-Accept and names upgrade in Connection",
      [
        "Upgrade",
        "websocket",
        "Connection",
        "Upgrade",
        "Sec-WebSocket-Accept",
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
      ],
      true,
      [
        "Upgrade",
        "websocket",
        "Sec-WebSocket-Accept",
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
        "connection",
        "upgrade",
      ],
    ],
    [
      "a 101 loses other hop-by-hop and Connection-listed fields",
      [
        "Connection",
        "Upgrade, X-Internal",
        "X-Internal",
        "1",
        "Keep-Alive",
        "timeout=5",
        "Upgrade",
        "websocket",
      ],
      true,
      ["Upgrade", "websocket", "connection", "upgrade"],
    ],
    [
      "a declined answer keeps its Content-Length and closes the connection",
      ["Content-Type", "text/plain", "Content-Length", "6", "Connection", "keep-alive"],
      false,
      ["Content-Type", "text/plain", "Content-Length", "6", "connection", "close"],
    ],
    [
      "a declined chunked answer loses Transfer-Encoding (the close delimits it)",
      ["Transfer-Encoding", "chunked", "Content-Type", "text/plain"],
      false,
      ["Content-Type", "text/plain", "connection", "close"],
    ],
    [
      "a 426 keeps the Upgrade it must send and names it in Connection",
      ["Upgrade", "websocket", "Connection", "Upgrade"],
      false,
      ["Upgrade", "websocket", "connection", "upgrade, close"],
    ],
  ])("%s", (_what, raw, switched, expected) => {
    expect(upgradeResponseHeaderList(raw, switched)).toEqual(expected);
  });
});

describe("isWebSocketUpgrade (RFC 6455 §4.2.1)", () => {
  it.each([
    [{ upgrade: "websocket" }, true],
    [{ upgrade: "WebSocket" }, true],
    [{ upgrade: "h2c, websocket" }, true],
    [{ upgrade: "h2c" }, false],
    [{ upgrade: "websockets" }, false],
    [{}, false],
  ])("for %j is %s", (fields, expected) => {
    expect(isWebSocketUpgrade(new Headers(fields))).toBe(expected);
  });
});
