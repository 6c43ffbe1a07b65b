import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENVTEST_AVAILABLE, type Envtest, startEnvtest, untilAllowed } from "../support/envtest.js";
import { pollUntil } from "../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { renderDeploy } from "./support/deploy.js";
import { exposedWithSlice, namespaceObject, sliceObject } from "./support/objects.js";
import { published } from "./support/store.js";
import { type SyncCli, startSyncCli, untilReady } from "./support/sync-cli.js";

/**
 * Without the watch cache every watch goes to etcd, so a watch resumed from a compacted revision gets a real
 * 410 Gone (https://kubernetes.io/docs/reference/using-api/api-concepts/#410-gone-responses). The changes the
 * sync must catch up on are made through a peer apiserver while its own is down, as in an HA control plane.
 */
describe.skipIf(!ENVTEST_AVAILABLE)("a watch that expired (410 Gone after an etcd compaction)", () => {
  let envtest: Envtest;
  let sync: SyncCli | undefined;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = uniquePrefix("envtest-gone");

  beforeAll(async () => {
    const deploy = await renderDeploy();
    envtest = await startEnvtest({ watchCache: false, serviceAccount: deploy.serviceAccount });
    await envtest.apply([
      ...deploy.objects,
      namespaceObject("shop"),
      ...exposedWithSlice("shop", "kept", ["10.4.0.1"]),
      ...exposedWithSlice("shop", "removed", ["10.4.0.2"]),
      ...exposedWithSlice("shop", "changed", ["10.4.0.3"]),
    ]);
    await untilAllowed(envtest, "/apis/discovery.k8s.io/v1/endpointslices");
    await untilAllowed(envtest, "/api/v1/services");
  });
  afterAll(async () => {
    await sync?.kill();
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
    await envtest?.close();
  });

  const publishedState = async () => {
    const view = await published(redis, prefix, "east");
    return Object.fromEntries(
      [...view.services]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([service, record]) => [
          service,
          (record.ports[0]?.ipv4.endpoints ?? []).map((endpoint) => endpoint.ip).sort(),
        ]),
    );
  };

  it("relists and publishes exactly the cluster's state: a deletion, an addition and a change it never saw as events", async () => {
    sync = await startSyncCli({ envtest, cluster: "east", prefix, podName: "east-0" });
    await untilReady(sync);
    await pollUntil(async () => Object.keys(await publishedState()).length === 3, {
      timeoutMs: 15_000,
      describe: () => "the three Services were not published",
    });

    await envtest.stopApiserver({ signal: "SIGKILL" });
    const peer = await envtest.startPeerApiserver();
    await peer.kubectl(["delete", "-n", "shop", "service/removed", "endpointslice/removed-a"]);
    await peer.apply([
      ...exposedWithSlice("shop", "added", ["10.4.0.4"]),
      sliceObject("shop", "changed", ["10.4.0.5"]),
    ]);
    await envtest.compact();
    await peer.stop();
    await envtest.startApiserver();

    // The informers' backoff grew while the apiserver was away (up to 30 s, jittered): allow for it.
    const expected = { "shop/added": ["10.4.0.4"], "shop/changed": ["10.4.0.5"], "shop/kept": ["10.4.0.1"] };
    await pollUntil(async () => JSON.stringify(await publishedState()) === JSON.stringify(expected), {
      timeoutMs: 60_000,
      describe: () => `the sync did not catch up after the 410: ${JSON.stringify(sync?.logs.slice(-10))}`,
    });
    // Caught up by listing again: the restarted apiserver served fresh LISTs of both resources.
    expect(await envtest.requestCount("LIST", "services")).toBeGreaterThan(0);
    expect(await envtest.requestCount("LIST", "endpointslices")).toBeGreaterThan(0);
    expect((await sync.readyz()).status).toBe(200);
  }, 120_000);
});
