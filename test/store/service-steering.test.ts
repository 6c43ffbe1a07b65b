import { describe, expect, it } from "vitest";
import { createWarnOnce } from "../../lib/warn-once.js";
import {
  decodeServiceRecordV2,
  type ServiceRecordV2,
  serializeServiceRecordV2,
} from "../../store/services.js";
import { decodeStoredService } from "../../store/stored-records.js";
import { recordingLogger } from "../support/loggers.js";

const record: ServiceRecordV2 = {
  v: 2,
  cluster: "east",
  service: "shop/web",
  ports: [
    {
      name: "http",
      number: 80,
      ipv4: { endpoints: [{ ip: "10.0.0.1", port: 8080 }], fallback: false, draining: [] },
      ipv6: { endpoints: [], fallback: false, draining: [] },
    },
  ],
};

describe("a service record's steering", () => {
  it("is written last and only when set, so records without it serialise as before", () => {
    expect(serializeServiceRecordV2(record)).not.toContain("steering");
    const steered = serializeServiceRecordV2({
      ...record,
      steering: {
        weights: [{ weight: 90, cluster: "east" }],
        policy: "weighted",
      } as ServiceRecordV2["steering"],
    });
    expect(
      steered.endsWith(',"steering":{"policy":"weighted","weights":[{"cluster":"east","weight":90}]}}'),
    ).toBe(true);
    expect(decodeServiceRecordV2(steered)).toMatchObject({
      ok: true,
      value: { steering: { policy: "weighted" } },
    });
  });

  it("is read off a record by a router that predates it as no steering (valibot objects drop unknown keys)", () => {
    const newer = JSON.stringify({ ...record, steering: { policy: "proximity" }, somethingLater: true });
    const decoded = decodeServiceRecordV2(newer);
    expect(decoded.ok && "somethingLater" in decoded.value).toBe(false);
  });

  it.each([
    ["a policy newer than this router", { policy: "geo-fence" }],
    [
      "weights out of order",
      {
        policy: "weighted",
        weights: [
          { cluster: "west", weight: 1 },
          { cluster: "east", weight: 1 },
        ],
      },
    ],
    ["a negative weight", { policy: "weighted", weights: [{ cluster: "east", weight: -1 }] }],
  ])("leaves out %s with one line and keeps serving the Service's endpoints", (_name, steering) => {
    const { logger, entries } = recordingLogger();
    const warnings = createWarnOnce(logger);
    const raw = JSON.stringify({ ...record, steering });
    for (let i = 0; i < 3; i++) {
      const decoded = decodeStoredService("east", "shop/web", raw, warnings);
      expect(decoded?.record.ports[0]?.ipv4.endpoints).toHaveLength(1);
      expect(decoded?.record.steering).toBeUndefined();
    }
    expect(
      entries.filter((e) => e.message === "ignoring a service record's steering this router cannot read"),
    ).toHaveLength(1);
  });
});
