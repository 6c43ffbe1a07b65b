import { describe, expect, it } from "vitest";
import { clusterKeys } from "../../../store/keys.js";
import type { Snapshot } from "../../../store/store.js";
import {
  endpoint,
  heartbeat,
  putRecord,
  putRoute,
  putServiceV2,
  removeRecord,
  removeRoute,
  routeRecord,
  routeRule,
  serviceRecord,
  serviceRecordV2,
} from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { sourceTestBed, until } from "./source-support.js";

const view = (snapshot: Snapshot | undefined, cluster: string) =>
  snapshot?.clusters.find((each) => each.name === cluster);

const api = routeRecord("httproute:shop/api", {
  hostnames: ["api.example.test"],
  rules: [routeRule([{ service: "shop/api", port: 9090, weight: 1 }])],
});

describe("redis snapshot source: store format v2", () => {
  const bed = sourceTestBed();

  it("loads version 2 services and routes, and follows their change entries", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    const service = (ip: string) =>
      serviceRecordV2({
        cluster: "east",
        service: "shop/api",
        ports: [{ number: 9090, ipv4: [endpoint(ip, 9000)] }],
      });
    await putServiceV2(admin, prefix, service("10.0.0.1"));
    await putRoute(admin, prefix, "east", api);

    const source = await bed.startSource({ prefix });
    expect(view(source.current(), "east")?.servicesV2.get("shop/api")).toEqual(service("10.0.0.1"));
    expect(view(source.current(), "east")?.routes.get(api.id)).toEqual(api);

    await putServiceV2(admin, prefix, service("10.0.0.2"));
    const moved = { ...api, hostnames: ["moved.example.test"] };
    await putRoute(admin, prefix, "east", moved);
    await until(
      () => view(source.current(), "east")?.routes.get(api.id)?.hostnames[0] === "moved.example.test",
      "the route change",
    );
    expect(view(source.current(), "east")?.servicesV2.get("shop/api")).toEqual(service("10.0.0.2"));

    await removeRoute(admin, prefix, "east", api.id);
    await until(() => view(source.current(), "east")?.routes.has(api.id) === false, "the route removal");
  });

  it("serves a version 1 cluster next to a version 2 one, each record's route followed through its entries", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "old", 60_000);
    await heartbeat(admin, prefix, "new", 60_000);
    const legacy = serviceRecord({ cluster: "old", service: "shop/web", ipv4: [endpoint("10.1.0.1", 80)] });
    await putRecord(admin, prefix, legacy);
    await putServiceV2(
      admin,
      prefix,
      serviceRecordV2({
        cluster: "new",
        service: "shop/api",
        ports: [{ number: 9090, ipv4: [endpoint("10.2.0.1", 9000)] }],
      }),
    );
    await putRoute(admin, prefix, "new", api);

    const source = await bed.startSource({ prefix });
    expect([...(view(source.current(), "old")?.routes.keys() ?? [])]).toEqual(["annotation:shop/web"]);
    expect([...(view(source.current(), "new")?.routes.keys() ?? [])]).toEqual([api.id]);

    await putRecord(admin, prefix, { ...legacy, hosts: ["renamed.example.test"] });
    await until(
      () =>
        view(source.current(), "old")?.routes.get("annotation:shop/web")?.hostnames[0] ===
        "renamed.example.test",
      "the version 1 record's route to follow its record",
    );
    await removeRecord(admin, prefix, "old", "shop/web");
    await until(() => view(source.current(), "old")?.routes.size === 0, "the version 1 record's route to go");
    expect(view(source.current(), "new")?.routes.has(api.id)).toBe(true);
  });

  it("refuses records and change entries of a newer version with one line per cluster and version", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    const { logger, lines } = capturingLogger();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRoute(admin, prefix, "east", {
      id: "httproute:shop/future",
      raw: JSON.stringify({ ...api, v: 3 }),
    });
    const source = await bed.startSource({ prefix, logger });
    await admin.xadd(
      clusterKeys(prefix, "east").changes,
      "*",
      "v",
      "3",
      "kind",
      "gateway",
      "id",
      "x",
      "op",
      "put",
    );
    await putRoute(admin, prefix, "east", {
      id: "httproute:shop/later",
      raw: JSON.stringify({ ...api, v: 3 }),
    });
    await putRoute(admin, prefix, "east", api);
    await until(
      () => view(source.current(), "east")?.routes.has(api.id) === true,
      "the valid route after them",
    );

    const newer = lines.filter((line) => String(line.msg).startsWith("record schema version"));
    expect(newer.map((line) => [line.msg, line.cluster])).toEqual([
      [
        "record schema version 3 is newer than this router understands (2): upgrade routers before syncs",
        "east",
      ],
    ]);
    expect(view(source.current(), "east")?.routes.size).toBe(1);
  });
});
