import { createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import { createRedisWriter } from "../../store/redis/writer.js";
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
import { at, CLUSTER, get, publish, record, workerFixture } from "./worker-fixture.js";

/** The hostile-client, -backend and -store cases that have a path on Workers, in real workerd. */
const { redis, freshPrefix, worker, backend, closesAfterEach } = workerFixture("workerd-hostile");

/** A backend on 127.0.0.1 answering every request with `reply`, byte for byte. */
async function rawBackend(reply: Buffer): Promise<{ ip: string; port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      if (chunk.includes("\r\n\r\n")) socket.write(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return closesAfterEach({
    ip: "127.0.0.1",
    port: typeof address === "object" && address ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}

const echoHeaders = (
  request: import("node:http").IncomingMessage,
  response: import("node:http").ServerResponse,
) => {
  let body = "";
  request.setEncoding("utf8");
  request.on("data", (chunk: string) => (body += chunk));
  request.on("end", () =>
    response.end(JSON.stringify({ body, forwarded: request.headers.forwarded ?? null })),
  );
};

describe("the Worker bundle against hostile input", () => {
  it("relays an answer whose reason phrase is UTF-8 past Latin-1", async () => {
    const prefix = freshPrefix();
    const b = await rawBackend(
      Buffer.concat([
        Buffer.from("HTTP/1.1 200 ", "latin1"),
        Buffer.from("OK ✓", "utf8"),
        Buffer.from("\r\ncontent-length: 2\r\nx-app: 1\r\n\r\nhi", "latin1"),
      ]),
    );
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(b)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    const response = await get(mf, "http://web.example.test/");
    expect([response.status, response.body, response.headers.get("x-app")]).toEqual([200, "hi", "1"]);
  });

  it("never lets a client's Forwarded with an open quote swallow its own element", async () => {
    const prefix = freshPrefix();
    const b = await backend("127.0.0.1", echoHeaders);
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(b)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    const response = await get(mf, "http://web.example.test/", {
      headers: { forwarded: 'for="6.6.6.6', "cf-connecting-ip": "192.0.2.7" },
    });
    expect(JSON.parse(response.body).forwarded).toBe("for=192.0.2.7;host=web.example.test;proto=http");
  });

  // workerd's own URL parser refuses a Host with `"` before the Worker runs; these reach it.
  it.each([
    ["a_b.wild.test", 404],
    ["-a.wild.test", 404],
    ["a.wild.test", 200],
  ])("answers a wildcard route's Host %s with %s", async (host, status) => {
    const prefix = freshPrefix();
    const b = await backend("127.0.0.1", echoHeaders);
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/wild", ["*.wild.test"], [at(b)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    expect((await get(mf, `http://${host}/`)).status).toBe(status);
  });

  it("skips a record whose endpoint is not an IP literal and serves the rest", async () => {
    const prefix = freshPrefix();
    const b = await backend("127.0.0.1", echoHeaders);
    const writer = createRedisWriter(redis(), { prefix, cluster: CLUSTER });
    await publish(writer, [record("shop/web", ["web.example.test"], [at(b)])]);
    const bad = record("shop/bad", ["bad.example.test"], [{ ip: "localhost", port: b.port }]);
    await redis().hset(clusterKeys(prefix, CLUSTER).services, "shop/bad", JSON.stringify(bad));
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    expect((await get(mf, "http://web.example.test/")).status).toBe(200);
    expect((await get(mf, "http://bad.example.test/")).status).toBe(404);
  });

  // RFC 9110 §15: a status code is 100-599; an answer with another is invalid, so the Worker answers 502.
  it.each(["600 Beyond", "999 Far Beyond"])("answers a backend's status %s 502", async (status) => {
    const prefix = freshPrefix();
    const b = await rawBackend(Buffer.from(`HTTP/1.1 ${status}\r\ncontent-length: 2\r\n\r\nhi`, "latin1"));
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(b)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    const response = await get(mf, "http://web.example.test/");
    expect([response.status, JSON.parse(response.body).error]).toEqual([502, "bad_gateway"]);
  });

  // RFC 9110 §8.6: no Content-Length in a 204.
  it("relays a 204 without the Content-Length its backend sent", async () => {
    const prefix = freshPrefix();
    const b = await rawBackend(
      Buffer.from("HTTP/1.1 204 No Content\r\ncontent-length: 5\r\nx-app: 1\r\n\r\n"),
    );
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(b)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    const response = await get(mf, "http://web.example.test/");
    expect([response.status, response.headers.get("x-app"), response.headers.get("content-length")]).toEqual([
      204,
      "1",
      null,
    ]);
  });

  it("skips a route record whose rewrite path holds CR LF, never reaching its backend, and serves the rest", async () => {
    const prefix = freshPrefix();
    let reached = 0;
    const b = await backend("127.0.0.1", (request, response) => {
      reached++;
      echoHeaders(request, response);
    });
    await heartbeat(redis(), prefix, CLUSTER, 120_000);
    const to = [{ service: "shop/web", port: 80, weight: 1 }];
    await putServiceV2(
      redis(),
      prefix,
      serviceRecordV2({
        cluster: CLUSTER,
        service: "shop/web",
        ports: [{ number: 80, ipv4: [endpoint(b.ip, b.port)] }],
      }),
    );
    const bad = routeRecord("httproute:shop/bad", {
      hostnames: ["bad.example.test"],
      rules: [
        routeRule(to, {
          filters: { rewrite: { path: { type: "ReplaceFullPath", value: "/a\r\nx-injected: 1" } } },
        }),
      ],
    });
    await putRoute(redis(), prefix, CLUSTER, { id: bad.id, raw: JSON.stringify(bad) });
    await putRoute(
      redis(),
      prefix,
      CLUSTER,
      routeRecord("httproute:shop/good", { hostnames: ["good.example.test"], rules: [routeRule(to)] }),
    );
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    expect((await get(mf, "http://bad.example.test/")).status).toBe(404);
    expect(reached).toBe(0);
    expect((await get(mf, "http://good.example.test/")).status).toBe(200);
  });

  it("does not charge a slow upload to the backend", async () => {
    const prefix = freshPrefix();
    const b = await backend("127.0.0.1", echoHeaders);
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(b)]),
    ]);
    const mf = worker({
      REDIS_URL,
      EDGESLICE_PREFIX: prefix,
      UPSTREAM_TRY_TIMEOUT_MS: "300",
      UPSTREAM_TOTAL_TIMEOUT_MS: "400",
    });
    await get(mf, "http://web.example.test/"); // a warm isolate with a loaded snapshot
    const text = "0123456789";
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 80));
        if (sent === text.length) return controller.close();
        controller.enqueue(new TextEncoder().encode(text[sent++]));
      },
    });
    const response = await get(mf, "http://web.example.test/up", {
      method: "POST",
      body,
      duplex: "half",
    } as RequestInit);
    expect([response.status, JSON.parse(response.body).body]).toEqual([200, text]);
  });
});
