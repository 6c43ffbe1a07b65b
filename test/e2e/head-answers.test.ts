import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, prefixMatch } from "../conformance/support/conformance-base.js";
import { type Conformance, startConformance } from "../conformance/support/conformance-fixture.js";

/** The router's own answers to HEAD carry what its GET answers carry, Content-Length included, and no body. */
let world: Conformance;
const HOST = "head.test";

beforeAll(async () => {
  world = await startConformance({
    label: "head",
    objects: [
      httpRouteObject("head", {
        parentRefs: [{ name: "same-namespace" }],
        hostnames: [HOST],
        rules: [{ matches: [prefixMatch("/served")], backendRefs: [backend("infra-backend-v1")] }],
      }),
    ],
  });
  await world.until({ host: HOST, path: "/served" }, (answer) => answer.echo !== undefined);
}, 30_000);

afterAll(() => world?.stop());

describe("HEAD answered by the router", () => {
  it("answers an unmatched path 404 with GET's header fields and Content-Length, and no body", async () => {
    const get = await world.send({ host: HOST, path: "/unmatched" });
    const head = await world.send({ host: HOST, path: "/unmatched", method: "HEAD" });
    expect([get.status, head.status]).toEqual([404, 404]);
    expect(head.body).toBe("");
    for (const name of ["content-type", "cache-control", "content-length"]) {
      expect(head.headers[name], name).toBe(get.headers[name]);
    }
    expect(Number(head.headers["content-length"])).toBe(Buffer.byteLength(get.body));
  });

  it("still proxies a matched HEAD to the backend", async () => {
    const head = await world.send({ host: HOST, path: "/served", method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers["x-backend"]).toBe("gateway-conformance-infra/infra-backend-v1");
    expect(head.body).toBe("");
  });
});
