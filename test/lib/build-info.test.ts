import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { BUILD_INFO, buildInfoFamily, versionLine } from "../../lib/build-info.js";
import { silentLogger } from "../../lib/logger.js";
import { renderFamilies } from "../../lib/prometheus.js";
import { MemoryStore } from "../../store/memory-store.js";
import { createSyncMetrics } from "../../sync/metrics.js";

const INFO = { version: "1.2.3", revision: "0123abc", node: "v24.11.0" };
const manifest = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

let router: NodeRouter | undefined;
beforeAll(async () => {
  router = await startNodeRouter(parseRouterConfig({ PORT: "0", ADMIN_TOKEN: "t" }), {
    source: new MemoryStore(),
    host: "127.0.0.1",
    logger: silentLogger,
  });
});
afterAll(() => router?.close());

describe("build info", () => {
  it("is package.json's version, an unknown revision from sources, and the running Node.js", () => {
    expect(BUILD_INFO).toEqual({ version: manifest.version, revision: "unknown", node: process.version });
  });

  it("prints one --version line with the version, the revision and the Node.js version", () => {
    expect(versionLine(INFO)).toBe("edgeslice 1.2.3 (revision 0123abc, Node.js v24.11.0)");
    expect(versionLine({ ...INFO, node: "" })).toBe("edgeslice 1.2.3 (revision 0123abc, Node.js none)");
  });

  it("renders edgeslice_build_info as one gauge of 1 labelled version, revision and node", () => {
    expect(renderFamilies([buildInfoFamily(INFO)])).toContain(
      'edgeslice_build_info{version="1.2.3",revision="0123abc",node="v24.11.0"} 1\n',
    );
  });

  it("is on the router's /_edgeslice/metrics and the sync's /metrics", async () => {
    const sample = `edgeslice_build_info{version="${manifest.version}",revision="unknown",node="${process.version}"} 1`;
    const scraped = await fetch(`${router?.adminUrl}/_edgeslice/metrics`, {
      headers: { authorization: "Bearer t" },
    });

    expect(await scraped.text()).toContain(sample);
    expect(createSyncMetrics({ cluster: "east" }).render()).toContain(sample);
  });
});
