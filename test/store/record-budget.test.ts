import { describe, expect, it } from "vitest";
import {
  HeldRecords,
  REFUSED_SHOWN,
  ROUTE_CANDIDATE_COST,
  recordDigest,
  routeCost,
} from "../../store/record-budget.js";

const budget = { maxBytes: 100, maxRecords: 3, maxRecordBytes: 40 };

describe("the records of one cluster held within its budget", () => {
  it.each<[string, [kind: "service" | "route", id: string, bytes: number][], string[], number]>([
    [
      "records that fit are held",
      [
        ["service", "a/a", 30],
        ["route", "r:a", 30],
      ],
      [],
      60,
    ],
    ["one over RECORD_MAX_BYTES is refused by its size", [["service", "a/a", 41]], ["a/a record-size"], 0],
    [
      "past CLUSTER_MAX_BYTES the rest is refused",
      [
        ["service", "a/a", 40],
        ["service", "a/b", 40],
        ["service", "a/c", 30],
      ],
      ["a/c budget"],
      80,
    ],
    [
      "past CLUSTER_MAX_RECORDS too",
      [
        ["service", "a/a", 1],
        ["service", "a/b", 1],
        ["route", "r:c", 1],
        ["route", "r:d", 1],
      ],
      ["r:d budget"],
      3,
    ],
    [
      "a record admitted again replaces its own bytes, not adds to them",
      [
        ["service", "a/a", 40],
        ["service", "a/b", 40],
        ["service", "a/a", 20],
        ["service", "a/c", 40],
      ],
      [],
      100,
    ],
    [
      "a held record that grows past the budget is let go and refused",
      [
        ["service", "a/a", 40],
        ["service", "a/b", 40],
        ["service", "a/b", 41],
      ],
      ["a/b record-size"],
      40,
    ],
  ])("%s", (_name, admissions, refused, bytes) => {
    const held = new HeldRecords(budget);
    for (const [kind, id, size] of admissions) held.admit(kind, id, size);
    const report = held.report();
    expect(report.refused.map((record) => `${record.id} ${record.reason}`)).toEqual(refused);
    expect(report.refusedCount).toBe(refused.length);
    expect(report.bytes).toBe(bytes);
  });

  it("forgets a removed record, held or refused, and frees its bytes", () => {
    const held = new HeldRecords(budget);
    held.admit("service", "a/a", 40);
    held.admit("service", "a/b", 99);
    held.remove("service", "a/a");
    held.remove("service", "a/b");
    expect(held.report()).toEqual({ bytes: 0, records: 0, refused: [], refusedCount: 0 });
  });

  it("names the first few refusals and counts all of them", () => {
    const held = new HeldRecords(budget);
    for (let i = 0; i < 12; i++) held.admit("route", `r:${i}`, 1_000);
    expect(held.report().refused).toHaveLength(REFUSED_SHOWN);
    expect(held.report().refusedCount).toBe(12);
  });

  it("keeps the digest of what it read, and none for a record admitted again until read", () => {
    const held = new HeldRecords(budget);
    held.admit("service", "a/a", 10);
    held.read("service", "a/a", recordDigest("0123456789"));
    expect(held.digestOf("service", "a/a")).toBe(recordDigest("0123456789"));
    held.admit("service", "a/a", 10);
    expect(held.digestOf("service", "a/a")).toBe("");
  });
});

describe("record digests", () => {
  it("tell a changed record from the same one", () => {
    const record = JSON.stringify({ v: 2, id: "r:a", rules: [1, 2, 3] });
    expect(recordDigest(record)).toBe(recordDigest(`${record}`));
    expect(recordDigest(record)).not.toBe(recordDigest(record.replace("3", "4")));
    expect(recordDigest("ab")).not.toBe(recordDigest("ba"));
  });
});

describe("what a route costs against the budget", () => {
  const rule = (matches: number) => ({ matches: Array.from({ length: matches }, () => ({})) });
  it.each([
    ["one hostname, one match", 300, { hostnames: ["a.test"], rules: [rule(1)] }, 300 + ROUTE_CANDIDATE_COST],
    [
      "no hostname counts as one (the catch-all bucket)",
      300,
      { hostnames: [], rules: [rule(2)] },
      300 + 2 * ROUTE_CANDIDATE_COST,
    ],
    [
      "every hostname times every match: a route table entry each",
      1_000,
      { hostnames: ["a.test", "b.test", "c.test"], rules: [rule(2), rule(1)] },
      1_000 + 9 * ROUTE_CANDIDATE_COST,
    ],
  ])("%s", (_name, bytes, route, cost) => {
    expect(routeCost(bytes, route)).toBe(cost);
  });

  it("holds a record at its decoded cost, keeping its digest, or refuses it when that no longer fits", () => {
    const held = new HeldRecords({ maxBytes: 1_000, maxRecords: 10, maxRecordBytes: 500 });
    held.admit("route", "r:a", 100);
    held.read("route", "r:a", "d1");
    expect(held.resize("route", "r:a", 600)).toBeUndefined();
    expect(held.digestOf("route", "r:a")).toBe("d1");
    held.admit("route", "r:b", 300);
    expect(held.resize("route", "r:b", 500)).toMatchObject({ reason: "budget" });
    expect(held.report()).toMatchObject({ bytes: 600, records: 1, refusedCount: 1 });
  });
});
