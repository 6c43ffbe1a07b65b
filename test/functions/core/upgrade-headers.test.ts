import { describe, expect, it } from "vitest";
import {
  isWebSocketUpgrade,
  upgradeResponseHeaderList,
  upstreamRequestHeaderList,
  upstreamUpgradeHeaderList,
  upstreamUpgradeHeaders,
} from "../../../functions/core/http/headers.js";
import {
  CLIENT_FORWARDING_FIELDS,
  forwardingOf,
  HOST_FIRST,
  info,
  sortedEntries,
  sortedPairs,
  webHeadersOf,
} from "./header-fixtures.js";

/** The header rules of an upgrade request and its answer (RFC 9110 §7.8, RFC 6455). */
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
        ...HOST_FIRST,
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
      [...HOST_FIRST, "upgrade", "websocket", ...forwardingOf(), "connection", "upgrade"],
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
      [...HOST_FIRST, "upgrade", "h2c", "accept", "*/*", ...forwardingOf(), "connection", "upgrade"],
    ],
    [
      "an untrusted client's forwarding fields are replaced as on any request",
      ["Upgrade", "websocket", ...CLIENT_FORWARDING_FIELDS, "Host", "evil.example"],
      [...HOST_FIRST, "upgrade", "websocket", ...forwardingOf(), "connection", "upgrade"],
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
    expect(sortedPairs(upstreamUpgradeHeaderList(raw, info))).toEqual(
      sortedEntries(upstreamUpgradeHeaders(webHeadersOf(raw), info)),
    );
  });

  it("leaves the ordinary request rule alone: Upgrade is still dropped there", () => {
    const raw = ["Connection", "Upgrade", "Upgrade", "websocket"];
    expect(upstreamRequestHeaderList(raw, info)).toEqual([...HOST_FIRST, ...forwardingOf()]);
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
