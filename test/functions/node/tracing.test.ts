import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseTraceparent } from "../../../functions/core/http/trace-context.js";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { freePort } from "../../support/redis.js";
import { endpointOn, publish, serviceRecord } from "../fixtures.js";
import { type Backend, type Router, send, startBackend, startNodeRouterOver } from "../harness.js";

/** Spans as an OTLP/HTTP collector on loopback receives them (the JSON encoding the exporter sends). */
interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly status?: { code?: number };
}

async function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      paths.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
      const decoded = JSON.parse(body) as {
        resourceSpans: {
          scopeSpans: {
            spans: (Omit<ReceivedSpan, "attributes"> & {
              attributes: { key: string; value: Record<string, unknown> }[];
            })[];
          }[];
        }[];
      };
      for (const resource of decoded.resourceSpans)
        for (const scope of resource.scopeSpans)
          for (const span of scope.spans)
            spans.push({
              ...span,
              attributes: Object.fromEntries(
                span.attributes.map(({ key, value }) => [key, Object.values(value)[0]]),
              ),
            });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function tracedRouter(env: Record<string, string>, backends: Backend[]): Promise<Router> {
  const { tracing } = parseRouterConfig(env);
  const router = await startNodeRouterOver({ config: { tracing } });
  await publish(
    router.store,
    serviceRecord({ cluster: "a", ipv4: backends.flatMap((b) => endpointOn(b).ipv4 ?? []) }),
  );
  return router;
}

const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_PARENT = "00f067aa0ba902b7";
const CLIENT = `00-${CLIENT_TRACE}-${CLIENT_PARENT}-01`;

describe("tracing over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  it("exports a server span under the client's context and an attempt span under it, whose id the backend gets as parent", async () => {
    const receiver = await otlpReceiver();
    open.push(receiver);
    const backend = await startBackend("127.0.0.1");
    open.push(backend);
    const router = await tracedRouter({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, [backend]);
    const answer = await send(router.port, {
      path: "/orders?x=1",
      headers: { traceparent: CLIENT, tracestate: "congo=t61" },
    });
    expect(answer.status).toBe(200);
    await router.close();

    expect(receiver.paths).toEqual(["POST /v1/traces application/json"]);
    const server = receiver.spans.find((span) => span.kind === 2);
    const attempt = receiver.spans.find((span) => span.kind === 3);
    expect(server).toMatchObject({
      traceId: CLIENT_TRACE,
      parentSpanId: CLIENT_PARENT,
      attributes: {
        "http.request.method": "GET",
        "url.path": "/orders?x=1",
        "server.address": "app.example",
        "http.response.status_code": 200,
        "edgeslice.service": "default/app",
        "edgeslice.cluster": "a",
        "edgeslice.route.rule": 0,
      },
    });
    expect(server?.attributes["http.route"]).toEqual(expect.any(String));
    expect(server?.name).toBe(`GET ${server?.attributes["http.route"]}`);
    expect(attempt).toMatchObject({
      traceId: CLIENT_TRACE,
      parentSpanId: server?.spanId,
      attributes: {
        "server.address": "127.0.0.1",
        "server.port": backend.port,
        "edgeslice.cluster": "a",
        "http.request.resend_count": 0,
        "edgeslice.attempt.outcome": "ok",
        "http.response.status_code": 200,
      },
    });
    const sent = backend.seen[0]?.headers;
    expect(parseTraceparent(String(sent?.traceparent))).toEqual({
      traceId: CLIENT_TRACE,
      parentId: server?.spanId,
      flags: 1,
    });
    expect(sent?.tracestate).toBe("congo=t61");
  });

  it("makes a span per attempt: a refused connection, then the retry that answered", async () => {
    const receiver = await otlpReceiver();
    open.push(receiver);
    const backend = await startBackend("127.0.0.1");
    open.push(backend);
    const closedPort = await freePort();
    const refused = { host: "127.0.0.1", port: closedPort } as Backend;
    const router = await tracedRouter({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, [refused, backend]);
    // The balancer picks at random: ask until one request tried the refusing backend first.
    for (let i = 0; i < 20; i++) expect((await send(router.port, {})).status).toBe(200);
    await router.close();
    const attempts = receiver.spans.filter((span) => span.kind === 3);
    const failed = attempts.find((span) => span.attributes["edgeslice.attempt.outcome"] === "connect");
    expect(failed?.status?.code).toBe(2);
    const retry = attempts.find((span) => span.parentSpanId === failed?.parentSpanId && span !== failed);
    expect(retry?.attributes).toMatchObject({
      "http.request.resend_count": 1,
      "edgeslice.attempt.outcome": "ok",
    });
  });

  it("exports nothing and sends an unsampled context when OTEL_TRACES_SAMPLER says always_off", async () => {
    const receiver = await otlpReceiver();
    open.push(receiver);
    const backend = await startBackend("127.0.0.1");
    open.push(backend);
    const router = await tracedRouter(
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: "always_off" },
      [backend],
    );
    await send(router.port, {});
    await router.close();
    expect(receiver.spans).toEqual([]);
    expect(parseTraceparent(String(backend.seen[0]?.headers.traceparent))?.flags).toBe(0);
  });
});

describe("trace context without span export", () => {
  it("passes a client's context on unchanged, and starts a sampled trace for a request without one", async () => {
    const backend = await startBackend("127.0.0.1");
    open.push(backend);
    const router = await tracedRouter({}, [backend]);
    open.push(router);
    await send(router.port, { headers: { traceparent: CLIENT, tracestate: "congo=t61" } });
    await send(router.port, { headers: { traceparent: "00-garbage", tracestate: "congo=t61" } });
    await send(router.port, { method: "HEAD", headers: {} });
    const [kept, replaced, head] = backend.seen.map((seen) => seen.headers);
    expect([kept?.traceparent, kept?.tracestate]).toEqual([CLIENT, "congo=t61"]);
    expect(parseTraceparent(String(replaced?.traceparent))?.flags).toBe(1);
    expect(replaced?.tracestate).toBeUndefined();
    expect(parseTraceparent(String(head?.traceparent))).toBeDefined();
    expect(replaced?.traceparent).not.toBe(head?.traceparent);
  });
});
