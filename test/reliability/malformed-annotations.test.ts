import { describe, expect, it } from "vitest";
import { serviceObject } from "../fake-kube/fixtures.js";
import { startFakeKube } from "../fake-kube/server.js";
import { eventually } from "../support/eventually.js";
import { capturingLogger } from "../support/loggers.js";
import { REDIS_URL } from "../support/redis.js";
import { startBackend } from "./support/backends.js";
import { cleanupsAfterEach, sharedRedis } from "./support/cleanups.js";
import { readySlice } from "./support/kube-objects.js";
import { startTestRouter } from "./support/router.js";
import { startSyncStack } from "./support/sync-stack.js";
import { fetchOnce } from "./support/traffic.js";

const defer = cleanupsAfterEach();

const NS = "shop";

/** Each Service with a broken edgeslice.io annotation, and what is wrong with it. */
const BROKEN: readonly { name: string; annotations: Record<string, string> }[] = [
  { name: "bad-hosts", annotations: { "edgeslice.io/hosts": "not a host!, also/bad" } },
  { name: "ip-host", annotations: { "edgeslice.io/hosts": "10.0.0.1" } },
  {
    name: "bad-port",
    annotations: { "edgeslice.io/hosts": "bad-port.annotations.test", "edgeslice.io/port": "nope" },
  },
  {
    name: "bad-path",
    annotations: {
      "edgeslice.io/hosts": "bad-path.annotations.test",
      "edgeslice.io/path-prefix": "no-leading-slash",
    },
  },
];

describe("malformed annotations and objects", () => {
  it("Services with broken edgeslice.io annotations and a slice that is not a valid object are logged and skipped; every valid Service serves, and a fixed annotation serves at once", async () => {
    const { redis, prefix } = sharedRedis("annotations", defer);
    const backend = await startBackend("good");
    defer(() => backend.kill());
    const target = [{ ip: backend.ip, port: backend.port }];

    const kube = await startFakeKube();
    defer(() => kube.close());
    for (const name of ["web", "api"]) {
      kube.apply(serviceObject(NS, name, { "edgeslice.io/hosts": `${name}.annotations.test` }));
      kube.apply(readySlice(NS, name, target));
    }
    for (const broken of BROKEN) {
      kube.apply(serviceObject(NS, broken.name, broken.annotations));
      kube.apply(readySlice(NS, broken.name, target));
    }
    // A slice the API server would never serve (endpoints is not a list) next to a valid slice of `api`.
    kube.apply({ ...readySlice(NS, "api", target, "api-broken"), endpoints: "garbage" });

    const { logger, lines } = capturingLogger();
    const sync = await startSyncStack({ kube, redis, prefix, cluster: "east", logger });
    defer(() => sync.stop());
    await sync.writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    await eventually(
      async () => (await sync.stored()).size === 2,
      10_000,
      "the two valid Services are stored",
    );

    const router = await startTestRouter({ env: { REDIS_URL, EDGESLICE_PREFIX: prefix } });
    defer(() => router.close());
    for (const host of ["web.annotations.test", "api.annotations.test"]) {
      await eventually(
        async () => (await fetchOnce(`${router.url}/`, host)).status === 200,
        5_000,
        `${host} serves`,
      );
    }
    expect([...(await sync.stored()).keys()].sort()).toEqual([`${NS}/api`, `${NS}/web`]);
    for (const host of ["bad-port.annotations.test", "bad-path.annotations.test"]) {
      const response = await fetchOnce(`${router.url}/`, host);
      expect(response.status).toBe(404);
    }

    const logged = JSON.stringify(lines.filter((line) => line.level === "warn" || line.level === "error"));
    for (const broken of BROKEN) expect(logged).toContain(broken.name);
    expect(logged).toContain("api-broken");

    // Fixing one annotation is enough for that Service to serve; the others are untouched.
    kube.apply(serviceObject(NS, "bad-port", { "edgeslice.io/hosts": "bad-port.annotations.test" }));
    await eventually(
      async () => (await fetchOnce(`${router.url}/`, "bad-port.annotations.test")).status === 200,
      10_000,
      "the fixed Service serves",
    );
    expect((await fetchOnce(`${router.url}/`, "web.annotations.test")).status).toBe(200);
  });
});
