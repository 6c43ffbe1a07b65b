import { describe, expect, it } from "vitest";
import {
  PROTECTED_REQUEST_HEADERS,
  PROTECTED_RESPONSE_HEADERS,
} from "../../../functions/core/forwarding/filters.js";
import {
  downstreamResponseHeaderObject,
  downstreamResponseHeaders,
  type ForwardingInfo,
  upgradeResponseHeaderList,
  upstreamRequestHeaderList,
  upstreamRequestHeaders,
  upstreamUpgradeHeaderList,
} from "../../../functions/core/http/headers.js";
import { type CompiledModifier, compileModifier } from "../../../store/filters/header-modifier.js";

const pair = (name: string, value: string) => ({ name, value });

function compiled(
  modifier: { set?: [string, string][]; add?: [string, string][]; remove?: string[] },
  protectedNames: ReadonlySet<string>,
): CompiledModifier {
  const result = compileModifier(
    {
      set: (modifier.set ?? []).map(([name, value]) => pair(name, value)),
      add: (modifier.add ?? []).map(([name, value]) => pair(name, value)),
      remove: modifier.remove ?? [],
    },
    protectedNames,
  );
  if (!result) throw new Error("nothing to modify");
  return result;
}

const requestModifier = compiled(
  {
    set: [
      ["x-env", "prod"],
      ["host", "evil.test"],
      ["x-forwarded-for", "6.6.6.6"],
    ],
    add: [
      ["x-tag", "added"],
      ["x-request-id", "forged"],
    ],
    remove: ["cookie", "x-forwarded-proto", "connection"],
  },
  PROTECTED_REQUEST_HEADERS,
);

const info: ForwardingInfo = {
  clientIp: "192.0.2.1",
  proto: "https",
  host: "shop.test",
  requestId: "rid-1",
  upstreamHost: "internal.shop.svc",
  modifier: requestModifier,
  // A balancer's X-Forwarded-For is extended: the modifier's set of it must not replace it.
  trustedPeer: true,
};

const client = [
  "Host",
  "shop.test",
  "X-Env",
  "dev",
  "X-Tag",
  "client",
  "Cookie",
  "a=1",
  "X-Forwarded-For",
  "10.9.9.9",
  "Accept",
  "*/*",
];

/** name → every value, in order. */
function fieldsOf(list: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = (list[i] ?? "").toLowerCase();
    out[name] = [...(out[name] ?? []), list[i + 1] ?? ""];
  }
  return out;
}

describe("RequestHeaderModifier and URLRewrite's hostname on the way upstream", () => {
  const expected = {
    "x-env": ["prod"],
    "x-tag": ["client", "added"],
    accept: ["*/*"],
    host: ["internal.shop.svc"],
    "x-forwarded-for": ["10.9.9.9, 192.0.2.1"],
    "x-forwarded-proto": ["https"],
    "x-forwarded-host": ["shop.test"],
    "x-request-id": ["rid-1"],
  };

  it("sets, adds and removes on Node's raw list, leaving the router's own fields alone", () => {
    const fields = fieldsOf(upstreamRequestHeaderList(client, info));
    expect(fields).toMatchObject(expected);
    expect(fields.cookie).toBeUndefined();
    expect(fields.forwarded).toEqual(["for=192.0.2.1;host=shop.test;proto=https"]);
  });

  it("does the same on web Headers", () => {
    const headers = new Headers(
      Object.entries(fieldsOf(client)).flatMap(([name, values]) =>
        values.map((value) => [name, value] as [string, string]),
      ),
    );
    const out = upstreamRequestHeaders(headers, info);
    expect(out.get("x-env")).toBe("prod");
    expect(out.get("x-tag")).toBe("client, added");
    expect(out.get("cookie")).toBeNull();
    expect(out.get("host")).toBe("internal.shop.svc");
    expect(out.get("x-forwarded-host")).toBe("shop.test");
    expect(out.get("x-forwarded-for")).toBe("10.9.9.9, 192.0.2.1");
    expect(out.get("x-request-id")).toBe("rid-1");
  });

  it("does the same on an upgrade, whose Upgrade and Connection stay the router's", () => {
    const fields = fieldsOf(
      upstreamUpgradeHeaderList([...client, "Upgrade", "websocket", "Connection", "Upgrade"], info),
    );
    expect(fields).toMatchObject({ ...expected, upgrade: ["websocket"], connection: ["upgrade"] });
  });
});

describe("ResponseHeaderModifier on the way back", () => {
  const modifier = compiled(
    {
      set: [["cache-control", "no-store"]],
      add: [
        ["x-served-by", "edgeslice"],
        ["x-request-id", "forged"],
      ],
      remove: ["server", "content-length"],
    },
    PROTECTED_RESPONSE_HEADERS,
  );

  it("applies to web Headers after the hop-by-hop fields are gone", () => {
    const upstream = new Headers({
      "cache-control": "max-age=60",
      server: "backend/1",
      "content-length": "2",
      connection: "close",
      "x-served-by": "pod",
    });
    const out = downstreamResponseHeaders(upstream, modifier);
    expect(out.get("cache-control")).toBe("no-store");
    expect(out.get("server")).toBeNull();
    expect(out.get("content-length")).toBe("2");
    expect(out.get("connection")).toBeNull();
    expect(out.get("x-served-by")).toBe("pod, edgeslice");
  });

  it("applies to Node's header object", () => {
    const out = downstreamResponseHeaderObject(
      { "cache-control": "max-age=60", server: "backend/1", "x-served-by": ["a", "b"], "keep-alive": "x" },
      modifier,
    );
    expect(out).toEqual({ "cache-control": "no-store", "x-served-by": ["a", "b", "edgeslice"] });
  });

  it("applies to an upgrade's answer, which keeps its Upgrade and Connection", () => {
    const out = fieldsOf(
      upgradeResponseHeaderList(["Upgrade", "websocket", "Server", "b/1"], true, modifier),
    );
    expect(out).toEqual({
      upgrade: ["websocket"],
      "cache-control": ["no-store"],
      "x-served-by": ["edgeslice"],
      connection: ["upgrade"],
    });
  });
});
