import { describe, expect, it } from "vitest";
import type { BackendRef, RouteRule } from "../../../store/routes.js";
import type { SnapshotSource } from "../../../store/store.js";
import { routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { snapshotOf } from "../fixtures.js";
import { type Backend, ROUTER_KINDS, send } from "../harness.js";
import { appTestKit, at } from "./kit.js";

/**
 * HTTPRoute rules on both proxy paths (the web path, as Workers runs it, and the Node fast path): matches,
 * filters, redirects and invalid backends, over a snapshot of version 2 records.
 */
const { backend, routerOf } = appTestKit();

/** A snapshot source with one cluster whose route `rules` send to Services backed by `backends`. */
function storeWith(backends: Record<string, Backend>, rules: RouteRule[]): SnapshotSource {
  const snapshot = snapshotOf([
    {
      name: "east",
      services: Object.entries(backends).map(([name, b]) =>
        serviceRecordV2({ cluster: "east", service: `shop/${name}`, ports: [{ number: 80, ipv4: [at(b)] }] }),
      ),
      routes: [routeRecord("httproute:shop/front", { hostnames: ["shop.test"], rules })],
    },
  ]);
  return { current: () => snapshot };
}

const to = (name: string, weight = 1): BackendRef => ({ service: `shop/${name}`, port: 80, weight });
const prefix = (value: string) => ({ path: { type: "PathPrefix" as const, value }, headers: [] });

describe.each(ROUTER_KINDS)("%s", (kind) => {
  const router = routerOf(kind);
  const get = (port: number, path: string, headers: Record<string, string> = {}, method = "GET") =>
    send(port, { path, method, headers: { host: "shop.test", ...headers } });

  it("rewrites the path and Host and modifies request headers, the router's own fields untouched", async () => {
    const web = await backend("127.0.0.1");
    const r = await router({
      source: storeWith({ web }, [
        routeRule([to("web")], {
          matches: [prefix("/api")],
          filters: {
            rewrite: { hostname: "internal.shop", path: { type: "ReplacePrefixMatch", value: "/v2" } },
            requestHeaders: {
              set: [
                { name: "x-env", value: "prod" },
                { name: "x-forwarded-for", value: "6.6.6.6" },
              ],
              add: [{ name: "x-tag", value: "edge" }],
              remove: ["cookie"],
            },
          },
        }),
      ]),
    });
    const reply = await get(r.port, "/api/items?q=1", { "x-env": "dev", cookie: "a=1", "x-tag": "client" });
    expect(reply.status).toBe(200);
    const seen = web.seen[0];
    expect(seen?.url).toBe("/v2/items?q=1");
    // Fetch replaces Host with the URL's authority (a forbidden request header): only Node's pools send the
    // rewritten one (transports/fetch.ts).
    expect(seen?.headers.host).toBe(
      kind === "web path (fetch transport)" ? `127.0.0.1:${web.port}` : "internal.shop",
    );
    expect(seen?.headers).toMatchObject({
      "x-env": "prod",
      "x-tag": "client, edge",
      "x-forwarded-host": "shop.test",
      "x-forwarded-for": "127.0.0.1",
    });
    expect(seen?.headers.cookie).toBeUndefined();
  });

  it("replaces the full path", async () => {
    const web = await backend("127.0.0.1");
    const r = await router({
      source: storeWith({ web }, [
        routeRule([to("web")], {
          filters: { rewrite: { path: { type: "ReplaceFullPath", value: "/index" } } },
        }),
      ]),
    });
    await get(r.port, "/anything/else?x=2");
    expect(web.seen[0]?.url).toBe("/index?x=2");
  });

  it("modifies the response's headers, never the request id", async () => {
    const web = await backend("127.0.0.1", (req, res) => {
      req.resume();
      res.setHeader("server", "backend/1");
      res.setHeader("cache-control", "max-age=60");
      res.setHeader("x-served-by", "pod");
      res.end("ok");
    });
    const r = await router({
      source: storeWith({ web }, [
        routeRule([to("web")], {
          filters: {
            responseHeaders: {
              set: [
                { name: "cache-control", value: "no-store" },
                { name: "x-request-id", value: "forged" },
              ],
              add: [{ name: "x-served-by", value: "edgeslice" }],
              remove: ["server"],
            },
          },
        }),
      ]),
    });
    const reply = await get(r.port, "/", { "x-request-id": "client-id-1" });
    expect(reply.headers["cache-control"]).toBe("no-store");
    expect(reply.headers.server).toBeUndefined();
    expect(reply.headers["x-served-by"]).toBe("pod, edgeslice");
    expect(reply.headers["x-request-id"]).toBe("client-id-1");
  });

  it("answers a RequestRedirect itself, with its status and Location", async () => {
    const web = await backend("127.0.0.1");
    const r = await router({
      source: storeWith({ web }, [
        routeRule([to("web")], {
          matches: [prefix("/old")],
          filters: {
            redirect: {
              statusCode: 308,
              scheme: "https",
              path: { type: "ReplacePrefixMatch", value: "/new" },
            },
          },
        }),
      ]),
    });
    const reply = await get(r.port, "/old/page?x=1", {}, "POST");
    expect(reply.status).toBe(308);
    expect(reply.headers.location).toBe("https://shop.test/new/page?x=1");
    expect(reply.body).toBe("");
    expect(web.seen).toEqual([]);
  });

  it("answers 500 invalid_backend for an invalid backend's share, reaching no backend", async () => {
    const web = await backend("127.0.0.1");
    const r = await router({
      source: storeWith({ web }, [
        routeRule([{ invalid: "RefNotPermitted: other/web", weight: 1 }, to("web", 0)]),
      ]),
    });
    const reply = await get(r.port, "/");
    expect(reply.status).toBe(500);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "invalid_backend" });
    expect(web.seen).toEqual([]);
  });

  it("routes by header and method matches before the catch-all rule", async () => {
    const web = await backend("127.0.0.1");
    const canary = await backend("127.0.0.1");
    const r = await router({
      source: storeWith({ web, canary }, [
        routeRule([to("canary")], {
          matches: [{ ...prefix("/"), headers: [{ name: "x-canary", value: "on" }] }],
        }),
        routeRule([to("canary")], { matches: [{ ...prefix("/"), method: "DELETE" }] }),
        routeRule([to("web")]),
      ]),
    });
    await get(r.port, "/a", { "x-canary": "on" });
    await get(r.port, "/b", {}, "DELETE");
    await get(r.port, "/c", { "x-canary": "off" });
    expect(canary.seen.map((seen) => seen.url)).toEqual(["/a", "/b"]);
    expect(web.seen.map((seen) => seen.url)).toEqual(["/c"]);
  });
});
