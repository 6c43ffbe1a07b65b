import { describe, expect, it } from "vitest";
import { createRedisWriter } from "../../store/redis/writer.js";
import { freePort, REDIS_URL } from "../support/redis.js";
import { at, CLUSTER, get, namedBackend, publish, record, workerFixture } from "./worker-fixture.js";

/** The Worker bundle (functions/workers/main.ts) in real workerd: routing, streaming, error answers. */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd");

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("the Worker bundle in workerd", () => {
  it("routes by Host to the backend the store lists, over IPv4 and IPv6 loopback", async () => {
    const prefix = freshPrefix();
    const web = await backend("127.0.0.1", namedBackend("web"));
    const api = await backend("::1", namedBackend("api"));
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(web)]),
      record("shop/api", ["api.example.test"], [], [at(api)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const toWeb = await get(mf, "http://web.example.test/hello?x=1");
    const toApi = await get(mf, "http://api.example.test/v1/items");

    expect(toWeb.status).toBe(200);
    expect(toWeb.body).toBe("web GET /hello?x=1 forwarded-host=web.example.test");
    expect(toApi.status).toBe(200);
    expect(toApi.body).toBe("api GET /v1/items forwarded-host=api.example.test");
  });

  it("streams the response: the first chunk arrives while the backend is still writing", async () => {
    const prefix = freshPrefix();
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const slow = await backend("127.0.0.1", (request, response) => {
      request.resume();
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("first chunk;");
      void finished.then(() => response.end("last chunk"));
    });
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/stream", ["stream.example.test"], [at(slow)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    // identity: for a gzip-accepting client workerd compresses the text reply, and its compressor holds the
    // small first chunk back until the end (seen here); the Worker's own streaming is what this test is about.
    const response = await mf.dispatchFetch("http://stream.example.test/", {
      headers: { "accept-encoding": "identity" },
    });
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    if (!reader) throw new Error("no response body");
    const decoder = new TextDecoder();
    let head = "";
    while (!head.includes("first chunk;")) {
      // Bounded: if the Worker buffered, this read would only return after finish(), which never comes.
      const { value, done } = await withTimeout(reader.read(), 10_000, "first chunk was held back");
      if (done) break;
      head += decoder.decode(value, { stream: true });
    }
    expect(head).toBe("first chunk;");
    finish();
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
    }
    expect(rest).toBe("last chunk");
  });

  it("answers 404 no_route for a host no Service is exposed at", async () => {
    const prefix = freshPrefix();
    const web = await backend("127.0.0.1", namedBackend("web"));
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(web)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const response = await get(mf, "http://unknown.example.test/");

    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toEqual({ error: "no_route", requestId: expect.any(String) });
  });

  it("answers HEAD 404 and 503 with GET's status and fields but none that describes content, and no body", async () => {
    const prefix = freshPrefix();
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/empty", ["empty.example.test"], []),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const unknown = await get(mf, "http://unknown.example.test/", { method: "HEAD" });
    const empty = await get(mf, "http://empty.example.test/", { method: "HEAD" });

    expect([unknown.status, empty.status]).toEqual([404, 503]);
    for (const answer of [unknown, empty]) {
      expect(answer.body).toBe("");
      expect(answer.headers.get("content-type")).toBeNull();
      expect(answer.headers.get("content-length")).toBeNull();
      expect(answer.headers.get("x-request-id")).toEqual(expect.any(String));
    }
    expect(empty.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("answers 503 no_endpoints with Retry-After for a Service that has no endpoints", async () => {
    const prefix = freshPrefix();
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/empty", ["empty.example.test"], []),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const response = await get(mf, "http://empty.example.test/");

    expect(response.status).toBe(503);
    expect(JSON.parse(response.body)).toEqual({ error: "no_endpoints", requestId: expect.any(String) });
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("answers 502 bad_gateway when every backend refuses the connection", async () => {
    const prefix = freshPrefix();
    const closedPort = await freePort();
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), [
      record("shop/down", ["down.example.test"], [{ ip: "127.0.0.1", port: closedPort }]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const response = await get(mf, "http://down.example.test/");

    expect(response.status).toBe(502);
    expect(JSON.parse(response.body)).toEqual({ error: "bad_gateway", requestId: expect.any(String) });
  });
});
