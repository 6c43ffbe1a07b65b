import { describe, expect, it } from "vitest";
import { createWarnOnce } from "../../../lib/warn-once.js";
import { ClusterIndex } from "../../../sync/kube/cluster-index.js";
import { sliceObject } from "../../fake-kube/fixtures.js";
import { recordingLogger } from "../../support/loggers.js";

function indexWithLog() {
  const { logger, entries } = recordingLogger();
  const index = new ClusterIndex(createWarnOnce(logger));
  const dropped = () => entries.filter((entry) => entry.message === "dropping endpoints of an EndpointSlice");
  return { index, logger, dropped };
}

describe("ClusterIndex reports the endpoints translation will drop", () => {
  it.each([
    ["an address that is not an IPv4 literal", ["999.1.1.1", "10.0.0.1"], 8080],
    ["an IPv6 address in an IPv4 slice", ["10.0.0.1", "fd00::1"], 8080],
    ["a zone id", ["fe80::1%eth0", "fd00::2"], 8080],
    ["port 0", ["10.0.0.1"], 0],
    ["port 99999", ["10.0.0.1"], 99_999],
  ])("logs a slice with %s once, with the reason, however often it is seen", (_case, addresses, port) => {
    const { index, logger, dropped } = indexWithLog();
    const slice = sliceObject("shop", "web-abc", "web", addresses, { port });
    index.upsertSlice(slice, logger);
    index.upsertSlice(slice, logger);
    expect(dropped()).toHaveLength(1);
    expect(dropped()[0]?.fields).toMatchObject({ namespace: "shop", name: "web-abc" });
    expect(dropped()[0]?.fields.problems).toEqual(expect.arrayContaining([expect.any(String)]));
  });

  it("says nothing about a slice whose endpoints all translate", () => {
    const { index, logger, dropped } = indexWithLog();
    index.upsertSlice(sliceObject("shop", "web-abc", "web", ["10.0.0.1", "10.0.0.2"]), logger);
    expect(dropped()).toEqual([]);
  });

  it("reports the slice again when it turns bad after having been fixed or deleted", () => {
    const { index, logger, dropped } = indexWithLog();
    const bad = sliceObject("shop", "web-abc", "web", ["999.1.1.1"]);
    index.upsertSlice(bad, logger);
    index.upsertSlice(sliceObject("shop", "web-abc", "web", ["10.0.0.1"]), logger);
    index.upsertSlice(bad, logger);
    index.deleteSlice(bad);
    index.upsertSlice(bad, logger);
    expect(dropped()).toHaveLength(3);
  });
});
