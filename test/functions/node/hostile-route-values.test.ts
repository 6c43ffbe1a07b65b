import { Redis } from "ioredis";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import type { RouteFilters } from "../../../store/routes.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "../../e2e/support/backends.js";
import {
  endpoint,
  heartbeat,
  putRoute,
  putServiceV2,
  routeRecord,
  routeRule,
  serviceRecordV2,
} from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

/**
 * A route record from an older or hostile sync whose filter values the wire cannot carry (written raw into
 * Redis, as no sync of this version would write it): the Node router skips that route with one line, never
 * sends the request to a backend that would be blamed for the router's own bad head, and serves the rest.
 */
const prefix = uniquePrefix("hostile-route-values");
const fleet: BackendFleet = createBackendFleet();
const { logger, lines } = capturingLogger();
let redis: Redis;
let router: NodeRouter;
let web: RecordingBackend;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  await heartbeat(redis, prefix, "east", 120_000);
  const config = parseRouterConfig({ REDIS_URL, PORT: "0", EDGESLICE_PREFIX: prefix, LOG_LEVEL: "error" });
  router = await startNodeRouter(config, { host: "127.0.0.1", logger, refreshIntervalMs: 50, drainMs: 500 });
  web = await fleet.start("web", "127.0.0.1");
  await putServiceV2(
    redis,
    prefix,
    serviceRecordV2({
      cluster: "east",
      service: "shop/web",
      ports: [{ number: 80, ipv4: [endpoint(web.ip, web.port)] }],
    }),
  );
});

afterAll(async () => {
  await router.close();
  await fleet.closeAll();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

async function get(host: string, path = "/") {
  const response = await request(`${router.url}${path}`, { headers: { host } });
  await response.body.dump();
  return response.statusCode;
}

async function untilServed(host: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await get(host)) !== 200) {
    if (Date.now() > deadline) throw new Error(`${host} was never routed`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const to = { service: "shop/web", port: 80, weight: 1 };

describe("the Node router on a route record whose filter values the wire cannot carry", () => {
  it.each<[string, string, RouteFilters, boolean]>([
    [
      "a rewrite path with CR LF",
      "rewrite-crlf",
      { rewrite: { path: { type: "ReplaceFullPath", value: "/a\r\nx-injected: 1" } } },
      true,
    ],
    [
      "a rewrite path with a space",
      "rewrite-space",
      { rewrite: { path: { type: "ReplacePrefixMatch", value: "/a b" } } },
      true,
    ],
    [
      "a redirect path with CR LF",
      "redirect-crlf",
      { redirect: { statusCode: 302, path: { type: "ReplaceFullPath", value: "/a\r\nx: 1" } } },
      false,
    ],
    [
      "a redirect to a wildcard host",
      "redirect-wildcard",
      { redirect: { statusCode: 302, hostname: "*.evil.test" } },
      false,
    ],
  ])(
    "skips a route with %s, logged once, its backend never reached, the rest served",
    async (_case, name, filters, backends) => {
      const id = `httproute:shop/${name}`;
      const bad = routeRecord(id, {
        hostnames: [`${name}.test`],
        rules: [routeRule(backends ? [to] : [], { filters })],
      });
      await putRoute(redis, prefix, "east", { id, raw: JSON.stringify(bad) });
      const marker = `httproute:shop/${name}-marker`;
      await putRoute(
        redis,
        prefix,
        "east",
        routeRecord(marker, { hostnames: [`${name}-marker.test`], rules: [routeRule([to])] }),
      );
      await untilServed(`${name}-marker.test`);
      const hitsBefore = web.hits();
      const statuses = [await get(`${name}.test`), await get(`${name}.test`), await get(`${name}.test`)];
      expect(statuses).toEqual([404, 404, 404]);
      expect(web.hits()).toBe(hitsBefore);
      expect(await get(`${name}-marker.test`)).toBe(200);
      const skipped = lines.filter(
        (line) => line.msg === "skipping invalid route record" && line.route === id,
      );
      expect(skipped).toHaveLength(1);
    },
  );
});
