import { describe, expect, it } from "vitest";
import { freePort } from "../../../support/redis.js";
import { closeAfterEach, ROUTER_KINDS, type RouterKind, send, startRouterOf } from "../../harness.js";
import { publishH2c, startH2cBackend } from "./h2c-kit.js";

/**
 * The router's own answers to gRPC calls (core/http/grpc-errors.ts) from HTTP/1.1 clients, on the Node path and the
 * web path (the Workers' shape): HTTP 200 with grpc-status and grpc-message, whatever the JSON answer would be.
 */
const closing = closeAfterEach();
const GRPC = { "content-type": "application/grpc" };

describe.each(ROUTER_KINDS)("gRPC errors on the %s", (kind: RouterKind) => {
  const router = (config = {}) => closing(startRouterOf(kind, { config }));

  it("answers a call no route matches UNIMPLEMENTED (12)", async () => {
    const r = await router();
    await publishH2c(r.store, [await freePort()], { protocol: "h2c", hostnames: ["other.example"] });
    const res = await send(r.port, { method: "POST", path: "/pkg.Svc/Do", headers: GRPC, body: "" });
    expect([res.status, res.headers["grpc-status"], res.body]).toEqual([200, "12", ""]);
    expect(res.headers["grpc-message"]).toBe("edgeslice: no_route");
    expect(res.headers["content-type"]).toBe("application/grpc");
  });

  it("answers a call to a Service without endpoints UNAVAILABLE (14)", async () => {
    const r = await router();
    await publishH2c(r.store, [], { protocol: "h2c" });
    const res = await send(r.port, { method: "POST", path: "/pkg.Svc/Do", headers: GRPC, body: "" });
    expect([res.status, res.headers["grpc-status"]]).toEqual([200, "14"]);
  });

  it("answers a call no backend accepts UNAVAILABLE (14)", async () => {
    const r = await router();
    await publishH2c(r.store, [await freePort()], { protocol: "h2c" });
    const res = await send(r.port, { method: "POST", path: "/pkg.Svc/Do", headers: GRPC, body: "" });
    expect([res.status, res.headers["grpc-status"]]).toEqual([200, "14"]);
  });

  it("keeps the JSON answer for a request that is not a gRPC call", async () => {
    const r = await router();
    await publishH2c(r.store, [], { protocol: "h2c" });
    const res = await send(r.port, {
      method: "POST",
      path: "/",
      headers: { "content-type": "application/json" },
    });
    expect([res.status, JSON.parse(res.body).error]).toEqual([503, "no_endpoints"]);
  });
});

describe("gRPC errors that need an h2c backend", () => {
  it("answers a call whose backend does not answer in time DEADLINE_EXCEEDED (4) on Node", async () => {
    const b = await closing(startH2cBackend(() => undefined));
    const r = await closing(
      startRouterOf("node fast path (startNodeRouter)", {
        config: { tryTimeoutMs: 200, totalTimeoutMs: 300, retries: 0 },
      }),
    );
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    const res = await send(r.port, { method: "POST", path: "/pkg.Svc/Do", headers: GRPC, body: "" });
    expect([res.status, res.headers["grpc-status"]]).toEqual([200, "4"]);
  });

  it("never sends HTTP/1.1 to an h2c backend on the web path: UNAVAILABLE (14), the backend untouched", async () => {
    let streams = 0;
    const b = await closing(startH2cBackend(() => streams++));
    const r = await closing(startRouterOf("web path (fetch transport)"));
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    const res = await send(r.port, { method: "POST", path: "/pkg.Svc/Do", headers: GRPC, body: "" });
    expect([res.status, res.headers["grpc-status"]]).toEqual([200, "14"]);
    expect(b.sessions.length + streams).toBe(0);
  });
});
