import { describe, expect, it } from "vitest";
import type { RouteRule } from "../../../store/routes.js";
import type { SnapshotSource } from "../../../store/store.js";
import { routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { ep, snapshotOf } from "../fixtures.js";
import { type UpgradeBackend, upgradeTestKit } from "./upgrade-peers.js";

/** HTTPRoute rules on the Node upgrade path (node/upgrade.ts): matches, filters, redirects, invalid backends. */
const { backend, router, client } = upgradeTestKit();

function storeWith(chat: UpgradeBackend, rules: RouteRule[]): SnapshotSource {
  const snapshot = snapshotOf([
    {
      name: "east",
      services: [
        serviceRecordV2({
          cluster: "east",
          service: "shop/chat",
          ports: [{ number: 80, ipv4: [ep(chat.host, chat.port)] }],
        }),
      ],
      routes: [routeRecord("httproute:shop/chat", { hostnames: ["chat.test"], rules })],
    },
  ]);
  return { current: () => snapshot };
}

const chatRef = { service: "shop/chat", port: 80, weight: 1 };

describe("an upgrade routed by a version 2 route", () => {
  it("goes out with the rule's rewrite and request headers, and comes back with its response headers", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router({
      source: storeWith(chat, [
        routeRule([chatRef], {
          matches: [
            { path: { type: "PathPrefix", value: "/ws" }, headers: [{ name: "x-room", value: "7" }] },
          ],
          filters: {
            rewrite: { hostname: "chat.internal", path: { type: "ReplacePrefixMatch", value: "/socket" } },
            requestHeaders: { set: [{ name: "x-env", value: "prod" }], add: [], remove: ["cookie"] },
            responseHeaders: {
              set: [],
              add: [{ name: "x-served-by", value: "edgeslice" }],
              remove: ["x-backend"],
            },
          },
        }),
      ]),
    });
    const c = client(r.port, {
      host: "chat.test",
      path: "/ws/lobby?x=1",
      headers: [
        ["X-Room", "7"],
        ["Cookie", "a=1"],
        ["X-Env", "dev"],
      ],
    });
    const head = await c.head();
    expect(head.status).toBe(101);
    expect(head.headers["x-served-by"]).toBe("edgeslice");
    expect(head.headers["x-backend"]).toBeUndefined();
    const seen = chat.seen[0];
    expect([seen?.url, seen?.headers.host, seen?.headers["x-env"], seen?.headers.cookie]).toEqual([
      "/socket/lobby?x=1",
      "chat.internal",
      "prod",
      undefined,
    ]);
    expect(seen?.headers["x-forwarded-host"]).toBe("chat.test");
  });

  it("is not routed when its headers do not match", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router({
      source: storeWith(chat, [
        routeRule([chatRef], {
          matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [{ name: "x-room", value: "7" }] }],
        }),
      ]),
    });
    const head = await client(r.port, { host: "chat.test", headers: [["X-Room", "8"]] }).head();
    expect(head.status).toBe(404);
    expect(chat.connections()).toBe(0);
  });

  it("gets a RequestRedirect from the router itself", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router({
      source: storeWith(chat, [
        routeRule([chatRef], { filters: { redirect: { statusCode: 302, hostname: "chat2.test" } } }),
      ]),
    });
    const c = client(r.port, { host: "chat.test", path: "/room" });
    const head = await c.head();
    expect([head.status, head.headers.location]).toEqual([302, "http://chat2.test/room"]);
    await c.closed;
    expect(chat.connections()).toBe(0);
  });

  it("gets 500 invalid_backend for an invalid backend's share", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router({
      source: storeWith(chat, [routeRule([{ invalid: "BackendNotFound", weight: 1 }])]),
    });
    const c = client(r.port, { host: "chat.test" });
    const head = await c.head();
    expect(head.status).toBe(500);
    expect(head.rest).toContain('"error":"invalid_backend"');
    expect(chat.connections()).toBe(0);
  });
});
