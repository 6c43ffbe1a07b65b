import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { clusterKeys } from "../../store/keys.js";
import { publishFromFolder } from "../../sync/folder.js";
import { testSyncConfig } from "../fake-kube/live-sync.js";
import { binomialTail } from "../functions/statistics.js";
import { capturingLogger } from "../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { BACKEND_ONLY_HEADER, createEchoFleet, type EchoFleet } from "./support/echo-backends.js";
import { hostClient } from "./support/host-client.js";
import { type KubeCluster, startKubeCluster } from "./support/kube-cluster.js";
import { manifestObjects, SHOP_BACKENDS, scenarioFiles } from "./support/route-manifests.js";
import { type ConditionSummary, untilRouteConditions } from "./support/route-status.js";

/**
 * Issue 16 end to end, every part real: the manifests an operator applies (GatewayClass, Gateway, HTTPRoutes,
 * IngressClass, Ingress, Services and EndpointSlices on loopback backends; support/route-manifests.ts) on a
 * fake API server → the live sync (reflectors, translation, reconciler, Redis writer, status writer) →
 * Redis → the Node router → the backends, which echo what they received. The same manifests as a folder go
 * through `--from DIR` (sync/folder.ts) and must publish the same routes.
 */
const prefix = uniquePrefix("e2e-gw");
const fleet: EchoFleet = createEchoFleet();
let redis: Redis;
let cluster: KubeCluster;
let router: NodeRouter;
let client: Pool;
let adminClient: Pool;
let folder: string;
let http: ReturnType<typeof hostClient>;
const send: ReturnType<typeof hostClient>["send"] = (...args) => http.send(...args);
const who: ReturnType<typeof hostClient>["who"] = (...args) => http.who(...args);

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const backends = await fleet.start([...SHOP_BACKENDS, "secret"]);
  const files = scenarioFiles(new Map([...backends].map(([name, backend]) => [name, backend.port])));
  folder = await mkdtemp(join(tmpdir(), "edgeslice-gw-"));
  for (const [file, text] of files) await writeFile(join(folder, file), text);

  cluster = await startKubeCluster({
    name: "east",
    prefix,
    redisUrl: REDIS_URL,
    env: { GATEWAY_ADDRESSES: "127.0.0.1" },
  });
  for (const text of files.values()) for (const object of manifestObjects(text)) cluster.kube.apply(object);
  const config = parseRouterConfig({
    REDIS_URL,
    PORT: "0",
    EDGESLICE_PREFIX: prefix,
    ADMIN_TOKEN: "e2e-token",
    LOG_LEVEL: "error",
  });
  router = await startNodeRouter(config, {
    host: "127.0.0.1",
    logger: silentLogger,
    refreshIntervalMs: 100,
    drainMs: 500,
  });
  client = new Pool(router.url, { connections: 8 });
  adminClient = new Pool(router.adminUrl, { connections: 1 });
  http = hostClient(client, "e2e-token", adminClient);
  for (const [host, path] of [
    ["split.gw.test", "/"],
    ["matches.gw.test", "/app"],
    ["filters.gw.test", "/headers"],
    ["site.ing.test", "/docs"],
    ["legacy.test", "/"],
  ] as const) {
    await http.untilProxied(host, path);
  }
}, 20_000);

afterAll(async () => {
  await client?.destroy();
  await adminClient?.destroy();
  await router?.close();
  await cluster?.stop();
  await fleet.closeAll();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Our status.parents conditions of HTTPRoute shop/`name` once `done` holds. */
const untilConditions = (name: string, done: (found: readonly ConditionSummary[]) => boolean) =>
  untilRouteConditions(cluster.kube, { namespace: "shop", name }, done);

describe("HTTPRoutes through the sync and the Node router", () => {
  it("splits requests 90/10 between the weighted Services within an exact binomial bound", async () => {
    const n = 400;
    // Canary answers ~ Binomial(400, 0.1): mean 40, sd 6; off by 32 or more has probability < 1e-6.
    expect(binomialTail(n, 0.1, 32)).toBeLessThan(1e-6);
    const counts = new Map<string, number>();
    for (let batch = 0; batch < n / 20; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => who("split.gw.test", "/")));
      for (const name of answers) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    const seen = JSON.stringify([...counts]);
    expect([...counts.keys()].sort(), seen).toEqual(["canary", "stable"]);
    expect(Math.abs((counts.get("canary") ?? 0) - 40), seen).toBeLessThan(32);
  });

  it("routes PathPrefix by whole segments, Exact over it, then method over header matches", async () => {
    expect(await who("matches.gw.test", "/app")).toBe("prefix");
    expect(await who("matches.gw.test", "/app/")).toBe("prefix");
    expect(await who("matches.gw.test", "/app/cart?x=1")).toBe("prefix");
    expect(await who("matches.gw.test", "/app/exact")).toBe("exact");
    // Exact counts the trailing slash: /app/exact/ is only under the prefix.
    expect(await who("matches.gw.test", "/app/exact/")).toBe("prefix");
    // /application is not under /app; no rule of the route matches, so the Ingress's defaultBackend answers.
    expect(await who("matches.gw.test", "/application")).toBe("fallback");

    const v2 = { headers: { "x-version": "v2" } };
    expect(await who("matches.gw.test", "/app/cart", v2)).toBe("header");
    expect(await who("matches.gw.test", "/app/cart", { headers: { "X-Version": "v3" } })).toBe("prefix");
    expect(await who("matches.gw.test", "/app/cart", { method: "POST" })).toBe("method");
    // Gateway API precedence: a method match outranks any number of header matches.
    expect(await who("matches.gw.test", "/app/cart", { method: "POST", ...v2 })).toBe("method");
    // The Exact path outranks both.
    expect(await who("matches.gw.test", "/app/exact", { method: "POST", ...v2 })).toBe("exact");
  });

  it("answers a RequestRedirect itself with its status and Location, reaching no backend", async () => {
    const before = [...fleet.hitsByName().values()].reduce((sum, hits) => sum + hits, 0);
    const prefixed = await send("filters.gw.test", "/old/page?q=1");
    expect(prefixed.status).toBe(301);
    expect(prefixed.headers.location).toBe("http://filters.gw.test/new/page?q=1");
    const moved = await send("filters.gw.test", "/moved/here");
    expect(moved.status).toBe(302);
    expect(moved.headers.location).toBe("https://www.gw.test/moved/here");
    const after = [...fleet.hitsByName().values()].reduce((sum, hits) => sum + hits, 0);
    expect(after).toBe(before);
  });

  it("rewrites what the backend sees: the matched prefix, the full path, the Host", async () => {
    const prefixed = await send("filters.gw.test", "/v1/items?page=2");
    expect(prefixed.echo).toMatchObject({ backend: "rewrite", path: "/v2/items?page=2" });
    expect((await send("filters.gw.test", "/v1")).echo?.path).toBe("/v2");
    const full = await send("filters.gw.test", "/legacy-page/any/thing");
    expect(full.echo).toMatchObject({ backend: "rewrite", path: "/index.html" });
    // The client's Host reaches the backend unchanged: the rewrite has no hostname.
    expect(full.echo?.headers.host).toBe("filters.gw.test");
    const rehosted = await send("filters.gw.test", "/rehost/a?b=1");
    expect(rehosted.echo).toMatchObject({ backend: "rewrite", path: "/a?b=1" });
    expect(rehosted.echo?.headers.host).toBe("internal.gw.test");
  });

  it("applies RequestHeaderModifier and ResponseHeaderModifier", async () => {
    const answer = await send("filters.gw.test", "/headers", {
      headers: { "x-env": "prod", "x-drop": "1", "x-added": "client" },
    });
    expect(answer.echo?.backend).toBe("headers");
    expect(answer.echo?.headers["x-env"]).toBe("e2e");
    expect(answer.echo?.headers["x-added"]).toBe("client, yes");
    expect(answer.echo?.headers["x-drop"]).toBeUndefined();
    expect(answer.headers["x-served-by"]).toBe("edgeslice");
    expect(answer.headers[BACKEND_ONLY_HEADER]).toBeUndefined();
    // Another rule of the same route keeps the backend's headers.
    const untouched = await send("filters.gw.test", "/v1/x", { headers: { "x-drop": "1" } });
    expect(untouched.echo?.headers["x-drop"]).toBe("1");
    expect(untouched.headers[BACKEND_ONLY_HEADER]).toBe("secret");
  });

  it("never sends to a Service of another namespace without a ReferenceGrant, and says so in status", async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => send("cross.gw.test", "/")));
    expect(answers.map((answer) => answer.status)).toEqual([500, 500, 500, 500, 500]);
    expect(answers[0]?.body).toContain("invalid_backend");
    expect(fleet.hitsByName().get("secret")).toBe(0);

    expect(await untilConditions("cross", (found) => found.length > 0)).toEqual(
      expect.arrayContaining([
        { type: "Accepted", status: "True", reason: "Accepted" },
        { type: "ResolvedRefs", status: "False", reason: "RefNotPermitted" },
      ]),
    );
    expect(await untilConditions("split", (found) => found.length > 0)).toEqual(
      expect.arrayContaining([
        { type: "Accepted", status: "True", reason: "Accepted" },
        { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs" },
      ]),
    );
    const gateway = cluster.kube.get("Gateway", "shop", "edge")?.status as
      | { addresses?: unknown; conditions?: { type: string; status: string }[] }
      | undefined;
    expect(gateway?.addresses).toEqual([{ type: "IPAddress", value: "127.0.0.1" }]);
    expect(gateway?.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "Programmed", status: "True" })]),
    );
  });
});

describe("an Ingress and an annotated Service next to the HTTPRoutes", () => {
  it("routes Prefix by segments, Exact exactly, ImplementationSpecific as Prefix, the rest to defaultBackend", async () => {
    const host = "site.ing.test";
    expect(await who(host, "/docs")).toBe("docs");
    expect(await who(host, "/docs/guide/intro")).toBe("docs");
    expect(await who(host, "/docsearch")).toBe("fallback");
    expect(await who(host, "/about")).toBe("about");
    expect(await who(host, "/about/")).toBe("fallback");
    expect(await who(host, "/about/team")).toBe("fallback");
    expect(await who(host, "/blog/2026/post")).toBe("blog");
    expect(await who(host, "/blogger")).toBe("fallback");
    expect(await who(host, "/")).toBe("fallback");
    expect(await who("unknown.test", "/anything")).toBe("fallback");
  });

  it("still routes the annotated Service, and explain names the route and its weights", async () => {
    expect(await who("legacy.test", "/any/path")).toBe("legacy");
    const annotated = await http.explain("host=legacy.test&path=/");
    expect(annotated).toMatchObject({ result: "proxy", route: { id: "annotation:shop/legacy" } });
    const split = await http.explain("host=split.gw.test&path=/");
    expect(split).toMatchObject({
      result: "proxy",
      route: { id: "httproute:shop/split", source: "httproute" },
      backends: [
        { service: "shop/stable", port: 80, weight: 90, share: 0.9 },
        { service: "shop/canary", port: 80, weight: 10, share: 0.1 },
      ],
    });
  });
});

describe("the same manifests through --from DIR", () => {
  it("publishes the route records the live sync published, every manifest read", async () => {
    const folderPrefix = `${prefix}-folder`;
    const { logger, lines } = capturingLogger();
    const config = testSyncConfig({
      CLUSTER_NAME: "east",
      REDIS_URL,
      EDGESLICE_PREFIX: folderPrefix,
      POD_NAME: "folder",
    });
    try {
      expect(await publishFromFolder(folder, config, { logger, once: true })).toBe(0);
      const live = await redis.hgetall(clusterKeys(prefix, "east").routes);
      const fromFolder = await redis.hgetall(clusterKeys(folderPrefix, "east").routes);
      // createdAt is each object's creationTimestamp: the API server sets it, a folder's manifests carry none.
      const withoutCreation = (records: Record<string, string>) =>
        Object.fromEntries(
          Object.entries(records).map(([id, raw]) => [id, { ...JSON.parse(raw), createdAt: 0 }]),
        );
      expect(Object.keys(fromFolder).sort()).toEqual(Object.keys(live).sort());
      expect(withoutCreation(fromFolder)).toEqual(withoutCreation(live));
      expect(Object.keys(live)).toHaveLength(7);
      const cross = JSON.parse(live["httproute:shop/cross"] ?? "{}") as { rules?: { backends: unknown }[] };
      expect(cross.rules?.[0]?.backends).toEqual([
        { invalid: expect.stringMatching(/^RefNotPermitted: /), weight: 1 },
      ]);

      // The cross-namespace reference is an invalid backend in the record (its share answered 500), not a
      // skipped object: HTTPRoute status (ResolvedRefs) is where a live sync reports it.
      expect(lines.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
    } finally {
      await deleteKeysWithPrefix(redis, folderPrefix);
    }
  });
});

describe("a ReferenceGrant applied later", () => {
  it("lets the HTTPRoute reach the other namespace's Service, and its status says so", async () => {
    const grant = `apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: { name: shop-routes, namespace: other }
spec:
  from: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: shop }]
  to: [{ group: "", kind: Service, name: secret }]
`;
    for (const object of manifestObjects(grant)) cluster.kube.apply(object);
    await http.untilProxied("cross.gw.test", "/");
    expect(await who("cross.gw.test", "/")).toBe("secret");
    const resolved = (found: readonly ConditionSummary[]) =>
      found.some((item) => item.type === "ResolvedRefs" && item.status === "True");
    expect(await untilConditions("cross", resolved)).toContainEqual({
      type: "ResolvedRefs",
      status: "True",
      reason: "ResolvedRefs",
    });
  });
});
