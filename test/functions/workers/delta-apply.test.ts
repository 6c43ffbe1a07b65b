import { describe, expect, it } from "vitest";
import { applyFollowUp, followUpCommands, planRefresh } from "../../../functions/workers/delta-refresh.js";
import {
  API,
  beat,
  clusterReplies,
  discovery,
  EAST,
  entry,
  OWN_EAST,
  ok,
  PREFIX,
  rawService,
  replyError,
  serviceV2,
  storeState,
  WEB,
  WEST,
  warningsWithLog,
} from "./delta-fixtures.js";

const [_web, api, east, west] = [WEB, API, EAST, WEST];

describe("applying what a refresh re-read", () => {
  const newWeb = serviceV2("east", "shop/web", "10.0.0.99");

  it("replaces the named records only, advances the position, and leaves other clusters' views as they were", () => {
    const state = storeState({ east, west });
    const replies = [
      ...discovery(["east", "west"]),
      ...clusterReplies([OWN_EAST, entry("6-0", "service", "shop/web")]),
      ...clusterReplies([entry("7-0", "service", "shop/web")]),
    ];
    const { warnings } = warningsWithLog();
    const plan = planRefresh(PREFIX, state, replies, warnings);
    expect(followUpCommands(PREFIX, plan)).toEqual([["hmget", "t:{east}:services", "shop/web"]]);
    const outcome = applyFollowUp(plan, [ok([rawService(newWeb.record)])], warnings);
    expect(outcome.changed).toBe(true);
    const next = outcome.state.clusters.get("east");
    expect(next?.lastChangeId).toBe("6-0");
    expect(next?.view.servicesV2.get("shop/web")).toEqual(newWeb.record);
    expect(next?.view.servicesV2.get("shop/api")).toEqual(api.record);
    expect(outcome.state.clusters.get("west")?.view).toBe(west.view);
  });

  it("removes a record the stream names that is gone from its hash", () => {
    const plan = planRefresh(
      PREFIX,
      storeState({ east }),
      [...discovery(["east"]), ...clusterReplies([OWN_EAST, entry("6-0", "service", "shop/api", "delete")])],
      warningsWithLog().warnings,
    );
    const outcome = applyFollowUp(plan, [ok([null])], warningsWithLog().warnings);
    expect([...(outcome.state.clusters.get("east")?.view.servicesV2.keys() ?? [])]).toEqual(["shop/web"]);
  });

  it("reports nothing changed when nothing did, so the snapshot object stays", () => {
    const plan = planRefresh(
      PREFIX,
      storeState({ east }),
      [...discovery(["east"]), ...clusterReplies([OWN_EAST])],
      warningsWithLog().warnings,
    );
    expect(followUpCommands(PREFIX, plan)).toEqual([]);
    const outcome = applyFollowUp(plan, [], warningsWithLog().warnings);
    expect(outcome.changed).toBe(false);
    expect(outcome.state.clusters.get("east")?.view).toBe(east.view);
    expect(outcome.state.clusters.get("east")?.records).toBe(east.records);
  });

  it("keeps each cluster's heartbeat record beside its view: a new beat changes no snapshot", () => {
    const plan = planRefresh(
      PREFIX,
      storeState({ east }),
      [...discovery(["east"]), ...clusterReplies([OWN_EAST])],
      warningsWithLog().warnings,
    );
    const outcome = applyFollowUp(plan, [], warningsWithLog().warnings);
    expect(outcome.changed).toBe(false);
    expect(outcome.state.clusters.get("east")?.heartbeat).toMatchObject({
      region: "eu-central",
      location: { lat: 50.11, long: 8.68 },
    });
  });

  it("skips an invalid changed record with one line however many refreshes meet it", () => {
    const { warnings, entries } = warningsWithLog();
    for (const id of ["6-0", "7-0"]) {
      const plan = planRefresh(
        PREFIX,
        storeState({ east }),
        [...discovery(["east"]), ...clusterReplies([OWN_EAST, entry(id, "service", "shop/web")])],
        warnings,
      );
      const outcome = applyFollowUp(plan, [ok(["{not json"])], warnings);
      expect(outcome.state.clusters.get("east")?.view.servicesV2.has("shop/web")).toBe(false);
    }
    expect(entries.filter((e) => e.message === "skipping invalid service record")).toHaveLength(1);
  });

  it("refuses a changed record of a newer schema version with one line per cluster and version", () => {
    const { warnings, entries } = warningsWithLog();
    const plan = planRefresh(
      PREFIX,
      storeState({ east }),
      [
        ...discovery(["east"]),
        ...clusterReplies([
          OWN_EAST,
          entry("6-0", "service", "shop/web"),
          entry("6-1", "service", "shop/api"),
        ]),
      ],
      warnings,
    );
    const v3 = (service: string) => JSON.stringify({ v: 3, cluster: "east", service });
    const outcome = applyFollowUp(plan, [ok([v3("shop/web"), v3("shop/api")])], warnings);
    expect(outcome.state.clusters.get("east")?.view.servicesV2.size).toBe(0);
    expect(entries.filter((e) => /schema version 3 is newer/.test(e.message))).toHaveLength(1);
  });

  it("reads a gapped cluster whole and leaves an absent one absent", () => {
    const newApi = serviceV2("east", "shop/api", "10.0.0.50");
    const plan = planRefresh(
      PREFIX,
      storeState({ east }),
      [...discovery(["east", "north"]), ...clusterReplies([entry("9-0", "service", "shop/api")])],
      warningsWithLog().warnings,
    );
    expect(followUpCommands(PREFIX, plan).map(([name, key]) => `${name} ${key}`)).toEqual([
      "xrevrange t:{east}:changes",
      "hgetall t:{east}:services",
      "hgetall t:{east}:routes",
      "exists t:{east}:lease",
      "get t:{east}:heartbeat",
      "xrevrange t:{north}:changes",
      "hgetall t:{north}:services",
      "hgetall t:{north}:routes",
      "exists t:{north}:lease",
      "get t:{north}:heartbeat",
    ]);
    const outcome = applyFollowUp(
      plan,
      [
        ok([entry("9-0", "service", "shop/api")]),
        ok({ "shop/api": rawService(newApi.record) }),
        ok({}),
        ok(1),
        beat(1),
        ok([]),
        ok({}),
        ok({}),
        ok(0),
        beat(0),
      ],
      warningsWithLog().warnings,
    );
    const next = outcome.state.clusters.get("east");
    expect(next?.lastChangeId).toBe("9-0");
    expect([...(next?.view.servicesV2.keys() ?? [])]).toEqual(["shop/api"]);
    expect(outcome.state.clusters.has("north")).toBe(false);
    expect([...outcome.state.absent]).toEqual(["north"]);
    expect(outcome.notes).toEqual([
      {
        message: "cluster read whole",
        cluster: "east",
        reason: "change stream no longer holds our last entry",
      },
    ]);
  });

  it("leaves out a cluster whose keys Redis cannot read as their types, with one line", () => {
    const { warnings, entries } = warningsWithLog();
    const plan = planRefresh(
      PREFIX,
      storeState({ east, west }),
      [
        ...discovery(["east", "west"]),
        replyError("WRONGTYPE Operation against a key holding the wrong kind of value"),
        ok(1),
        beat(1),
        ...clusterReplies([entry("7-0", "service", "shop/web")]),
      ],
      warnings,
    );
    const wrong = replyError("WRONGTYPE Operation against a key holding the wrong kind of value");
    const outcome = applyFollowUp(plan, [wrong, wrong, wrong, wrong, wrong], warnings);
    expect([...outcome.state.clusters.keys()]).toEqual(["west"]);
    expect(entries.filter((e) => e.message === "skipping a cluster whose keys cannot be read")).toHaveLength(
      1,
    );
  });
});
