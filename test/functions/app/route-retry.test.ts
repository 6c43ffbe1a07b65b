import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { RuleRetry, RuleTimeouts } from "../../../store/routes.js";
import type { SnapshotSource } from "../../../store/store.js";
import { routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { snapshotOf } from "../fixtures.js";
import { type Backend, ROUTER_KINDS, send } from "../harness.js";
import { appTestKit, at } from "./kit.js";

/**
 * A rule's HTTPRouteRetry on both proxy paths: the answers of its codes are retried up to its attempts, on the
 * one pod a Service may have, after its backoff; what is left past them is the backend's own answer.
 */
const { backend, routerOf } = appTestKit();

function storeWith(web: Backend, retry: RuleRetry | undefined, timeouts?: RuleTimeouts): SnapshotSource {
  const snapshot = snapshotOf([
    {
      name: "east",
      services: [
        serviceRecordV2({ cluster: "east", service: "shop/web", ports: [{ number: 80, ipv4: [at(web)] }] }),
      ],
      routes: [
        routeRecord("httproute:shop/front", {
          hostnames: ["shop.test"],
          rules: [routeRule([{ service: "shop/web", port: 80, weight: 1 }], { retry, timeouts })],
        }),
      ],
    },
  ]);
  return { current: () => snapshot };
}

/** Answers `status` to its first `failures` requests (resets the connection when `status` is 0), then 200. */
function flaky(failures: number, status: number) {
  let seen = 0;
  return (request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", () => {
      seen++;
      if (seen > failures) response.end(`ok after ${seen - 1}`);
      else if (status === 0) request.socket.resetAndDestroy();
      else response.writeHead(status, { "content-length": "0" }).end();
    });
  };
}

const call = (port: number, method = "GET") =>
  send(port, {
    path: "/",
    method,
    headers: { host: "shop.test" },
    ...(method === "POST" ? { body: "x" } : {}),
  });

describe.each(ROUTER_KINDS)("%s", (kind) => {
  const router = routerOf(kind);

  it.each([
    ["retries an answer of its codes and answers the success", { codes: [503], attempts: 2 }, 1, 200, 2],
    ["answers the backend's failure once the attempts are spent", { codes: [503], attempts: 2 }, 5, 503, 3],
  ])("%s", async (_case, retry, failures, answered, sent) => {
    const web = await backend("127.0.0.1", flaky(failures, 503));
    const r = await router({ source: storeWith(web, retry), ejection: { consecutiveFailures: 1_000 } });
    expect((await call(r.port)).status).toBe(answered);
    expect(web.seen).toHaveLength(sent);
  });

  it("waits at least the backoff before a retry", async () => {
    const arrivals: number[] = [];
    const fail = flaky(1, 503);
    const web = await backend("127.0.0.1", (request, response) => {
      arrivals.push(performance.now());
      fail(request, response);
    });
    const r = await router({ source: storeWith(web, { codes: [503], attempts: 1, backoffMs: 200 }) });
    expect((await call(r.port)).status).toBe(200);
    expect(arrivals).toHaveLength(2);
    expect((arrivals[1] ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(200);
  });
});

describe.each(ROUTER_KINDS)("%s", (kind) => {
  const router = routerOf(kind);

  it("passes on an answer whose code the rule does not retry", async () => {
    const web = await backend("127.0.0.1", flaky(1, 500));
    const r = await router({ source: storeWith(web, { codes: [503] }) });
    expect((await call(r.port)).status).toBe(500);
    expect(web.seen).toHaveLength(1);
  });

  it("retries the one pod after a reset connection (HTTPRouteRetryConnectionError)", async () => {
    const web = await backend("127.0.0.1", flaky(1, 0));
    const r = await router({
      source: storeWith(web, { codes: [] }),
      ejection: { consecutiveFailures: 1_000 },
    });
    expect((await call(r.port)).status).toBe(200);
    expect(web.seen).toHaveLength(2);
  });

  it("retries the one pod after its backendRequest timeout (HTTPRouteRetryBackendTimeout)", async () => {
    let seen = 0;
    const web = await backend("127.0.0.1", (request, response) => {
      request.resume();
      if (++seen > 1) response.end("ok");
    });
    const r = await router({
      source: storeWith(web, { codes: [], attempts: 1 }, { backendRequestMs: 200 }),
      ejection: { consecutiveFailures: 1_000 },
    });
    expect((await call(r.port)).status).toBe(200);
    expect(web.seen).toHaveLength(2);
  });

  it("without a rule retry passes a 503 on at once (the router's own rules)", async () => {
    const web = await backend("127.0.0.1", flaky(1, 503));
    const r = await router({ source: storeWith(web, undefined) });
    expect((await call(r.port)).status).toBe(503);
    expect(web.seen).toHaveLength(1);
  });

  it("never sends a POST again once a backend answered it", async () => {
    const web = await backend("127.0.0.1", flaky(1, 503));
    const r = await router({ source: storeWith(web, { codes: [503], attempts: 2 }) });
    expect((await call(r.port, "POST")).status).toBe(503);
    expect(web.seen).toHaveLength(1);
  });
});
