import { connect } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type GrpcConformance, startGrpcConformance } from "./support/grpc-conformance.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";

/**
 * Conformance HTTPRouteBackendProtocolH2C: an HTTPRoute to a Service port whose appProtocol is
 * kubernetes.io/h2c; a request with HTTP/2 prior knowledge reaches the backend, which the router speaks HTTP/2
 * cleartext to (the backend answers with the HTTP version it read).
 */
let world: GrpcConformance;

beforeAll(async () => {
  world = await startGrpcConformance({
    label: "backend-h2c",
    objects: [
      httpRouteObject("backend-protocol-h2c", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [{ backendRefs: [{ name: "infra-backend-v1", port: 8081 }] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

/** GET / with HTTP/2 prior knowledge to the router: status and body. */
function h2Get(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":path": "/", ":authority": "example.com" });
    let status = 0;
    let body = "";
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("end", () => {
      session.close();
      resolve({ status, body });
    });
    stream.on("error", reject);
    stream.end();
  });
}

describe("HTTPRouteBackendProtocolH2C", () => {
  it("accepts the route with its references resolved", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, "backend-protocol-h2c", (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it("sends an HTTP/2 prior-knowledge request on to the backend over h2c", async () => {
    const expected = { status: 200, body: `${INFRA}/infra-backend-v1 HTTP/2.0` };
    const deadline = Date.now() + 10_000;
    let answer = await h2Get(world.router.port);
    while (answer.body !== expected.body && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      answer = await h2Get(world.router.port);
    }
    expect(answer).toEqual(expected);
  });
});
