import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { RouteFilters, RouteRule } from "../../store/routes.js";
import {
  endpoint,
  heartbeat,
  putRoute,
  putServiceV2,
  routeRecord,
  routeRule,
  serviceRecordV2,
} from "../e2e/support/contract-layout.js";
import { REDIS_URL } from "../support/redis.js";
import { CLUSTER, get, workerFixture } from "./worker-fixture.js";

/**
 * The redirects of the official HTTPRouteRedirectPort, HTTPRouteRedirectScheme, HTTPRouteRedirectPath and
 * HTTPRouteRedirectPortAndScheme in real workerd: the same routing core as Node, the scheme and port taken
 * from the Worker's own request URL. (URLRewrite's hostname cannot reach a backend from a Worker: fetch sends
 * the target's authority as Host, functions/transports/fetch.ts.)
 */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd-redirects");

/** A backend no redirect may reach: it answers 200, which every case would notice. */
const unreachable = (request: IncomingMessage, response: ServerResponse) => {
  request.resume();
  response.writeHead(200).end();
};

const rule = (path: string, filters: RouteFilters): RouteRule =>
  routeRule([], { matches: [{ path: { type: "PathPrefix", value: path }, headers: [] }], filters });

async function workerWith(rules: RouteRule[]) {
  const web = await backend("127.0.0.1", unreachable);
  const prefix = freshPrefix();
  await heartbeat(redis(), prefix, CLUSTER, 120_000);
  await putServiceV2(
    redis(),
    prefix,
    serviceRecordV2({
      cluster: CLUSTER,
      service: "shop/web",
      ports: [{ number: 80, ipv4: [endpoint(web.ip, web.port)] }],
    }),
  );
  await putRoute(
    redis(),
    prefix,
    CLUSTER,
    routeRecord("httproute:shop/front", { hostnames: ["shop.test"], rules }),
  );
  return worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
}

const CASES: readonly (readonly [string, number, string])[] = [
  ["http://shop.test/port/a", 302, "http://shop.test:8083/port/a"],
  ["http://shop.test:8080/port/a", 302, "http://shop.test:8083/port/a"],
  ["http://shop.test/scheme/a?q=1", 301, "https://shop.test/scheme/a?q=1"],
  ["http://shop.test:8080/scheme/a", 301, "https://shop.test/scheme/a"],
  ["http://shop.test:8080/keep-port/a", 302, "http://example.org:8080/keep-port/a"],
  ["http://shop.test/prefix/lemon", 302, "http://shop.test/replacement/lemon"],
  ["http://shop.test/full/path", 307, "http://shop.test/full-replacement"],
  ["https://shop.test/to-http/a", 308, "http://shop.test/to-http/a"],
  ["https://shop.test/keep-port/a", 302, "https://example.org/keep-port/a"],
];

describe("redirects in workerd", () => {
  it("answers each redirect with its status and the Location the port, scheme and path rules give", async () => {
    const mf = await workerWith([
      rule("/port", { redirect: { statusCode: 302, port: 8083 } }),
      rule("/scheme", { redirect: { statusCode: 301, scheme: "https" } }),
      rule("/keep-port", { redirect: { statusCode: 302, hostname: "example.org" } }),
      rule("/prefix", {
        redirect: { statusCode: 302, path: { type: "ReplacePrefixMatch", value: "/replacement" } },
      }),
      rule("/full", {
        redirect: { statusCode: 307, path: { type: "ReplaceFullPath", value: "/full-replacement" } },
      }),
      rule("/to-http", { redirect: { statusCode: 308, scheme: "http" } }),
    ]);
    for (const [url, status, location] of CASES) {
      const answer = await get(mf, url, { redirect: "manual" });
      expect([answer.status, answer.headers.get("location")], url).toEqual([status, location]);
    }
  });
});
