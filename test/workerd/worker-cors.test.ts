import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { Cors, RouteRule } from "../../store/routes.js";
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
 * The CORS filter (official HTTPRouteCORS) in real workerd, through the wrangler bundle: the Worker answers a
 * preflight itself, and puts the Access-Control-* fields of an allowed origin on the backend's answer in
 * place of the backend's own.
 */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd-cors");

/** Counts the requests it gets, and sends its own Access-Control-Allow-Origin the router must replace. */
function countingBackend() {
  let requests = 0;
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    requests += 1;
    request.resume();
    response.writeHead(200, { "access-control-allow-origin": "https://backend.example" }).end("ok");
  };
  return { handler, count: () => requests };
}

const CORS: Cors = {
  allowOrigins: ["https://www.foo.com", "https://*.bar.com"],
  allowMethods: ["GET", "OPTIONS"],
  allowHeaders: ["x-header-1", "x-header-2"],
  exposeHeaders: ["x-header-3"],
  allowCredentials: true,
  maxAge: 3600,
};

async function workerWith(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const web = await backend("127.0.0.1", handler);
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
  const rule: RouteRule = routeRule([{ service: "shop/web", port: 80, weight: 1 }], {
    matches: [{ path: { type: "PathPrefix", value: "/cors" }, headers: [] }],
    filters: { cors: CORS },
  });
  await putRoute(
    redis(),
    prefix,
    CLUSTER,
    routeRecord("httproute:shop/front", { hostnames: ["shop.test"], rules: [rule] }),
  );
  return worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
}

describe("CORS in workerd", () => {
  it("answers a preflight from a wildcard-matched origin itself, with the filter's fields, and calls no backend", async () => {
    const counting = countingBackend();
    const mf = await workerWith(counting.handler);
    const answer = await get(mf, "http://shop.test/cors/a", {
      method: "OPTIONS",
      headers: {
        origin: "https://xpto.www.bar.com",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-header-1",
      },
    });
    expect(answer.status).toBe(200);
    expect(
      Object.fromEntries([...answer.headers].filter(([name]) => name.startsWith("access-control-"))),
    ).toEqual({
      "access-control-allow-origin": "https://xpto.www.bar.com",
      "access-control-allow-credentials": "true",
      "access-control-allow-methods": "GET, OPTIONS",
      "access-control-allow-headers": "x-header-1, x-header-2",
      "access-control-expose-headers": "x-header-3",
      "access-control-max-age": "3600",
    });
    expect(counting.count()).toBe(0);
  });

  it("puts the allowed origin's fields on the backend's answer in place of the backend's own", async () => {
    const counting = countingBackend();
    const mf = await workerWith(counting.handler);
    const allowed = await get(mf, "http://shop.test/cors/a", { headers: { origin: "https://www.foo.com" } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://www.foo.com");
    expect(allowed.headers.get("access-control-allow-credentials")).toBe("true");
    expect(allowed.headers.get("access-control-expose-headers")).toBe("x-header-3");
    const refused = await get(mf, "http://shop.test/cors/a", { headers: { origin: "https://foobar.com" } });
    expect(refused.status).toBe(200);
    expect(refused.headers.get("access-control-allow-origin")).toBe("https://backend.example");
    expect(refused.headers.get("access-control-allow-credentials")).toBeNull();
    expect(counting.count()).toBe(2);
  });
});
