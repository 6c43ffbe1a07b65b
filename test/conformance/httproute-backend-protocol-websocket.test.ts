import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplyInput } from "../fake-kube/store.js";
import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";
import { BINARY, openWebSocket, startWebSocketEcho, TEXT } from "./support/websocket-echo.js";

/**
 * Conformance HTTPRouteBackendProtocolWebSocket: a backendRef to infra-backend-v1's port 8082, whose
 * appProtocol is kubernetes.io/ws. A WebSocket opened through the Gateway reaches the backend, and a text and
 * a binary message come back as sent.
 */
let world: Conformance;
let echo: Awaited<ReturnType<typeof startWebSocketEcho>>;
const ROUTE = "backend-protocol-ws";

/** infra-backend-v1 with its third port, and the EndpointSlice of that port at the WebSocket echo. */
function webSocketPort(port: number): ApplyInput[] {
  return [
    {
      kind: "Service",
      metadata: { name: "infra-backend-v1", namespace: INFRA },
      spec: {
        type: "ClusterIP",
        ports: [
          { name: "http", port: 8080, protocol: "TCP", targetPort: 3000 },
          {
            name: "third-port",
            port: 8082,
            protocol: "TCP",
            targetPort: 3000,
            appProtocol: "kubernetes.io/ws",
          },
        ],
      },
    },
    {
      kind: "EndpointSlice",
      metadata: {
        name: "infra-backend-v1-ws",
        namespace: INFRA,
        labels: { "kubernetes.io/service-name": "infra-backend-v1" },
      },
      addressType: "IPv4",
      ports: [{ name: "third-port", port, protocol: "TCP", appProtocol: "kubernetes.io/ws" }],
      endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
    },
  ];
}

beforeAll(async () => {
  echo = await startWebSocketEcho();
  world = await startConformance({
    label: "websocket",
    objects: [
      ...webSocketPort(echo.port),
      httpRouteObject(ROUTE, {
        parentRefs: [{ name: "same-namespace" }],
        rules: [{ backendRefs: [{ name: "infra-backend-v1", port: 8082 }] }],
      }),
    ],
  });
}, 30_000);

afterAll(async () => {
  await world?.stop();
  await echo?.close();
});

describe("conformance HTTPRouteBackendProtocolWebSocket", () => {
  it("accepts the route", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, ROUTE, (found) =>
      found.some((entry) => entry.conditions.includes("Accepted=True/Accepted")),
    );
    expect(parents[0]?.conditions).toContain("Accepted=True/Accepted");
  });

  it("carries a WebSocket to the backend and its text and binary messages both ways", async () => {
    const port = Number(new URL(world.routerUrl()).port);
    const deadline = Date.now() + 10_000;
    let session = await openWebSocket(port, GATEWAY_ADDRESS, "/ws");
    // The sync publishes and the router reloads a moment after the objects are applied.
    while (session.status !== 101 && Date.now() < deadline) {
      session.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      session = await openWebSocket(port, GATEWAY_ADDRESS, "/ws");
    }
    try {
      expect(session.status).toBe(101);
      expect(session.accepted).toBe(true);
      const text = await session.exchange(TEXT, Buffer.from("Websocket Support!"));
      expect({ opcode: text.opcode, payload: text.payload.toString() }).toEqual({
        opcode: TEXT,
        payload: "Websocket Support!",
      });
      const binary = await session.exchange(BINARY, Buffer.from([1, 2, 3, 4, 5, 6, 7]));
      expect({ opcode: binary.opcode, payload: [...binary.payload] }).toEqual({
        opcode: BINARY,
        payload: [1, 2, 3, 4, 5, 6, 7],
      });
      expect(echo.upgrades()).toBeGreaterThan(0);
    } finally {
      session.close();
    }
  });
});
