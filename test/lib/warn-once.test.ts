import { describe, expect, it } from "vitest";
import { createWarnOnce } from "../../lib/warn-once.js";
import { recordingLogger } from "../support/loggers.js";

describe("createWarnOnce", () => {
  it("logs a problem once however often it is reported", () => {
    const { logger, entries } = recordingLogger();
    const warnings = createWarnOnce(logger);
    for (let i = 0; i < 5; i++) warnings.warn("east/shop/web", "not JSON", "skipping invalid record", { i });
    expect(entries).toEqual([{ level: "warn", message: "skipping invalid record", fields: { i: 0 } }]);
  });

  it("logs each distinct key once, and a key again when its reason changes", () => {
    const { logger, entries } = recordingLogger();
    const warnings = createWarnOnce(logger);
    const logged = [
      warnings.warn("a", "bad port", "bad"),
      warnings.warn("b", "bad port", "bad"),
      warnings.warn("a", "bad port", "bad"),
      warnings.warn("a", "bad ip", "bad"),
      warnings.warn("a", "bad ip", "bad"),
    ];
    expect(logged).toEqual([true, true, false, true, false]);
    expect(entries).toHaveLength(3);
  });

  it("logs again once a cleared problem comes back", () => {
    const { logger, entries } = recordingLogger();
    const warnings = createWarnOnce(logger);
    warnings.warn("a", "r", "bad");
    warnings.clear("a");
    warnings.clear("never-held");
    expect(warnings.size()).toBe(0);
    warnings.warn("a", "r", "bad");
    expect(entries).toHaveLength(2);
  });

  it("remembers a bounded number of keys, forgetting the oldest first", () => {
    const { logger, entries } = recordingLogger();
    const warnings = createWarnOnce(logger, 3);
    for (const key of ["a", "b", "c", "d"]) warnings.warn(key, "r", "bad");
    expect(warnings.size()).toBe(3);
    warnings.warn("d", "r", "bad");
    warnings.warn("a", "r", "bad");
    expect(entries.length).toBe(5);
  });
});
