import { afterEach, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { eventually } from "../../support/eventually.js";
import { recordingLogger } from "../../support/loggers.js";
import { REDIS_URL, uniquePrefix } from "../../support/redis.js";

const routers: NodeRouter[] = [];
afterEach(async () => {
  for (const router of routers.splice(0)) await router.close();
});

describe("a router starting against a healthy Redis", () => {
  it("loads the store on its first attempt and logs no warning", async () => {
    const { logger, entries } = recordingLogger();
    const config = parseRouterConfig({ PORT: "0", REDIS_URL, EDGESLICE_PREFIX: uniquePrefix("start") });
    const router = await startNodeRouter(config, { host: "127.0.0.1", logger, drainMs: 200 });
    routers.push(router);

    await eventually(
      () =>
        entries.some((entry) => entry.message === "store loaded") &&
        router.redisSource?.status().connected === true,
      10_000,
      () => `the store loaded and followed (logged: ${entries.map((entry) => entry.message).join("; ")})`,
    );

    expect(entries.filter((entry) => entry.level === "warn" || entry.level === "error")).toEqual([]);
    expect(entries.filter((entry) => entry.message === "store loaded")).toHaveLength(1);
  });
});
