import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import {
  type Upstream,
  UpstreamConnectError,
  type UpstreamRequest,
} from "../../../functions/transports/upstream.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { ep, publish, serviceRecord } from "../fixtures.js";
import { testConfig } from "../harness.js";

/**
 * The web path's WebSocket pass-through (Workers), through createApp with a scripted transport: the
 * shapes real workerd produces are covered in test/workerd/worker-websocket.test.ts.
 */
type Script = (request: UpstreamRequest, call: number) => Response | Promise<Response>;

async function appWith(webSockets: boolean, script: Script) {
  const store = new MemoryStore();
  await publish(store, serviceRecord({ cluster: "a", ipv4: [ep("10.0.0.1"), ep("10.0.0.2")] }));
  const seen: UpstreamRequest[] = [];
  const upstream: Upstream = {
    webSockets,
    send: async (request) => {
      seen.push(request);
      return script(request, seen.length);
    },
  };
  const app = createApp({
    source: store,
    upstream,
    config: testConfig,
    now: Date.now,
    random: () => 0,
    balancing: "random",
    logger: silentLogger,
    ejection: { consecutiveFailures: 1_000 },
  });
  const handshake = (method = "GET") =>
    app.fetch(
      new Request("http://app.example/chat", {
        method,
        headers: { upgrade: "websocket", connection: "Upgrade", "keep-alive": "timeout=5" },
      }),
    );
  return { seen, handshake };
}

/** What Workers' fetch resolves with for a WebSocket handshake; Node cannot build a 101 Response itself. */
function switched(): Response {
  return {
    status: 101,
    statusText: "Switching Protocols",
    headers: new Headers(),
    webSocket: {},
  } as unknown as Response;
}

describe("a WebSocket handshake on the web path", () => {
  it("keeps Upgrade, names it in Connection and drops other hop-by-hop fields when the transport carries WebSockets", async () => {
    const { seen, handshake } = await appWith(true, () => new Response("ok"));
    await handshake();
    const headers = seen[0]?.headers;
    expect([headers?.get("upgrade"), headers?.get("connection"), headers?.has("keep-alive")]).toEqual([
      "websocket",
      "upgrade",
      false,
    ]);
  });

  it("is an ordinary GET with Upgrade stripped when the transport cannot carry WebSockets", async () => {
    const { seen, handshake } = await appWith(false, () => new Response("ok"));
    await handshake();
    expect([seen[0]?.headers.has("upgrade"), seen[0]?.headers.has("connection")]).toEqual([false, false]);
  });

  it("hands the backend's 101 back as the very same Response, its webSocket with it", async () => {
    const answer = switched();
    const { handshake } = await appWith(true, () => answer);
    expect(await handshake()).toBe(answer);
  });

  it("goes to another backend after a connect failure", async () => {
    const { seen, handshake } = await appWith(true, (request, call) => {
      if (call === 1) throw new UpstreamConnectError(request.target);
      return switched();
    });
    expect((await handshake()).status).toBe(101);
    expect(seen.map((r) => r.target.ip)).toEqual(["10.0.0.1", "10.0.0.2"]);
  });

  it("is not sent again after a failure once the connect succeeded (an ordinary GET would be)", async () => {
    const failFirst: Script = (_request, call) => {
      if (call === 1) throw new Error("socket reset after the request was written");
      return new Response("ok");
    };
    const ws = await appWith(true, failFirst);
    expect((await ws.handshake()).status).toBe(502);
    expect(ws.seen).toHaveLength(1);

    const plain = await appWith(false, failFirst);
    expect((await plain.handshake()).status).toBe(200);
    expect(plain.seen).toHaveLength(2);
  });
});
