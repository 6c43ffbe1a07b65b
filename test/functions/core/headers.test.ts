import { describe, expect, it } from "vitest";
import {
  downstreamResponseHeaderObject,
  downstreamResponseHeaders,
  forwardedElement,
  hasBody,
  upstreamRequestHeaderList,
  upstreamRequestHeaders,
} from "../../../functions/core/http/headers.js";
import {
  CLIENT_FORWARDING_FIELDS,
  info,
  sortedEntries,
  sortedPairs,
  webHeadersOf,
} from "./header-fixtures.js";

/** The header rules of an ordinary request and its response (upgrades: upgrade-headers.test.ts). */
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

  it.each([
    [
      "drops the headers named in Connection",
      { connection: "close, X-Secret , x-other", "x-secret": "1", "x-other": "2", "x-kept": "3" },
      info,
      { "x-secret": null, "x-other": null, "x-kept": "3" },
    ],
    [
      "keeps the original Host",
      { host: "app.example:8443" },
      { ...info, host: "app.example:8443" },
      { host: "app.example:8443" },
    ],
  ])("%s", (_what, incoming, forwarding, expected: Record<string, string | null>) => {
    const out = upstreamRequestHeaders(new Headers(incoming), forwarding);
    const names = Object.keys(expected);
    expect(names.map((name) => out.get(name))).toEqual(names.map((name) => expected[name]));
  });
});

/** TRUSTED_PROXIES (core/http/trusted-proxies.ts): a balancer's fields are kept and extended, anyone else's replaced. */
describe("forwarding fields by the peer's trust", () => {
  const sent = {
    "x-forwarded-for": "203.0.113.1",
    "x-forwarded-proto": "https",
    "x-forwarded-host": "shop.example",
    forwarded: "for=203.0.113.1;proto=https",
  };
  const own = "for=192.0.2.7;host=app.example;proto=http";
  const names = ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded"] as const;
  const plain = { ...info, proto: "http" as const };

  it.each([
    ["an untrusted peer's are replaced", sent, false, ["192.0.2.7", "http", "app.example", own]],
    [
      "a trusted peer's are kept, the lists extended",
      sent,
      true,
      ["203.0.113.1, 192.0.2.7", "https", "shop.example", `for=203.0.113.1;proto=https, ${own}`],
    ],
    ["a trusted peer that sent none gets the router's", {}, true, ["192.0.2.7", "http", "app.example", own]],
    [
      "a trusted peer's repeated lines joined, as web Headers join them",
      [
        ["x-forwarded-for", "203.0.113.1"],
        ["x-forwarded-for", "198.51.100.2"],
        ["x-forwarded-proto", "https"],
        ["x-forwarded-proto", "http"],
      ],
      true,
      ["203.0.113.1, 198.51.100.2, 192.0.2.7", "https, http", "app.example", own],
    ],
    [
      "a trusted peer's Forwarded with an open quoted string is dropped, not extended",
      { forwarded: 'for="6.6.6.6' },
      true,
      ["192.0.2.7", "http", "app.example", own],
    ],
  ])("%s", (_what, incoming: ConstructorParameters<typeof Headers>[0], trustedPeer, expected) => {
    const forwarding = { ...plain, trustedPeer };
    const web = upstreamRequestHeaders(new Headers(incoming), forwarding);
    expect(names.map((name) => web.get(name))).toEqual(expected);
    const raw = [...new Headers(incoming)].flat();
    const list = upstreamRequestHeaderList(raw, forwarding);
    expect(names.map((name) => list[list.indexOf(name) + 1])).toEqual(expected);
  });

  it("keeps the client's address out when the runtime does not know it, extending a trusted peer's list as is", () => {
    const unknown = { ...plain, clientIp: undefined };
    const incoming = new Headers({ "x-forwarded-for": "203.0.113.1" });
    expect(upstreamRequestHeaders(incoming, { ...unknown, trustedPeer: true }).get("x-forwarded-for")).toBe(
      "203.0.113.1",
    );
    expect(upstreamRequestHeaders(incoming, unknown).get("x-forwarded-for")).toBeNull();
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
    expect(sortedPairs(upstreamRequestHeaderList(raw, info))).toEqual(
      sortedEntries(upstreamRequestHeaders(webHeadersOf(raw), info)),
    );
  });

  it("drops the fields named in a Connection value the caller already read, as it does reading it itself", () => {
    const raw = ["Connection", "X-Secret", "X-Secret", "1", "X-Kept", "2"];
    const read = upstreamRequestHeaderList(raw, { ...info, connection: "X-Secret" });
    expect(read).toEqual(upstreamRequestHeaderList(raw, info));
    expect(read).not.toContain("x-secret");
  });

  it("lowercases names and keeps repeated ordinary fields as separate lines", () => {
    const out = upstreamRequestHeaderList(["Accept", "a", "X-Multi", "1", "X-Multi", "2"], info);
    expect(out.slice(0, 8)).toEqual(["host", "app.example", "accept", "a", "x-multi", "1", "x-multi", "2"]);
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

describe("hasBody (RFC 9112 §6.3, Node rawHeaders)", () => {
  it.each([
    [["Content-Length", "5"], true],
    [["content-length", " 0 "], false],
    [["Transfer-Encoding", "chunked"], true],
    [["TRANSFER-ENCODING", "gzip, chunked", "Content-Length", "0"], true],
    [["Accept", "*/*"], false],
    [[], false],
  ])("for %j is %s", (raw, expected) => {
    expect(hasBody(raw)).toBe(expected);
  });
});
