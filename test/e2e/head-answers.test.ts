import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, prefixMatch } from "../conformance/support/conformance-base.js";
import { type Conformance, startConformance } from "../conformance/support/conformance-fixture.js";

/**
 * The router's own answers to HEAD carry what its GET answers carry except the fields that describe content
 * (RFC 9110 §9.3.2), and no body; the connection stays usable after them.
 */
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

/** Writes `requests` on one connection (the last asks to close it) and reads until the router closes it. */
function rawExchange(url: string, requests: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(requests));
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
  });
}

describe("HEAD answered by the router", () => {
  it("answers an unmatched path 404 with GET's fields but none that describes content, and no body", async () => {
    const get = await world.send({ host: HOST, path: "/unmatched" });
    const head = await world.send({ host: HOST, path: "/unmatched", method: "HEAD" });
    expect([get.status, head.status]).toEqual([404, 404]);
    expect(get.headers["content-type"]).toBe("application/json");
    expect(head.body).toBe("");
    expect(head.headers["content-type"]).toBeUndefined();
    expect(head.headers["content-length"]).toBeUndefined();
    expect(head.headers["cache-control"]).toBe(get.headers["cache-control"]);
    expect(head.headers["x-request-id"]).toEqual(expect.any(String));
  });

  it("keeps the connection: a GET after a router-made HEAD answer on the same connection is proxied", async () => {
    const text = await rawExchange(
      world.routerUrl(),
      `HEAD /unmatched HTTP/1.1\r\nHost: ${HOST}\r\n\r\n` +
        `GET /served HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`,
    );
    const [first, second] = text.split(/(?=^HTTP\/1\.1 )/m);
    expect(first).toMatch(/^HTTP\/1\.1 404 /);
    expect(first?.endsWith("\r\n\r\n")).toBe(true);
    expect(second).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toContain("gateway-conformance-infra/infra-backend-v1");
  });

  it("still proxies a matched HEAD to the backend", async () => {
    const head = await world.send({ host: HOST, path: "/served", method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers["x-backend"]).toBe("gateway-conformance-infra/infra-backend-v1");
    expect(head.body).toBe("");
  });
});
