import { describe, expect, it } from "vitest";
import { createHostBudget } from "../../../functions/workers/host-budget.js";

type Step = readonly ["hold", string, number] | readonly ["touch", string];

const cases: readonly {
  readonly name: string;
  readonly budget: number;
  readonly steps: readonly Step[];
  readonly keep: string | undefined;
  readonly evicted: readonly string[];
  readonly left: readonly string[];
}[] = [
  {
    name: "hosts within the budget are all kept",
    budget: 100,
    steps: [
      ["hold", "a", 40],
      ["hold", "b", 60],
    ],
    keep: "b",
    evicted: [],
    left: ["a", "b"],
  },
  {
    name: "the least recently held host goes first",
    budget: 100,
    steps: [
      ["hold", "a", 40],
      ["hold", "b", 40],
      ["hold", "c", 40],
    ],
    keep: "c",
    evicted: ["a"],
    left: ["b", "c"],
  },
  {
    name: "a touched host counts as recently used",
    budget: 100,
    steps: [
      ["hold", "a", 40],
      ["hold", "b", 40],
      ["touch", "a"],
      ["hold", "c", 40],
    ],
    keep: "c",
    evicted: ["b"],
    left: ["a", "c"],
  },
  {
    name: "the host being served stays even when it alone is over the budget",
    budget: 100,
    steps: [
      ["hold", "a", 10],
      ["hold", "big", 500],
    ],
    keep: "big",
    evicted: ["a"],
    left: ["big"],
  },
  {
    name: "the host being served stays even when it is the least recently used",
    budget: 50,
    steps: [
      ["hold", "a", 40],
      ["hold", "b", 40],
    ],
    keep: "a",
    evicted: ["b"],
    left: ["a"],
  },
  {
    name: "holding a host again replaces its cost",
    budget: 100,
    steps: [
      ["hold", "a", 90],
      ["hold", "b", 10],
      ["hold", "a", 20],
    ],
    keep: "a",
    evicted: [],
    left: ["b", "a"],
  },
  {
    name: "several old hosts go until the total fits",
    budget: 100,
    steps: [
      ["hold", "a", 30],
      ["hold", "b", 30],
      ["hold", "c", 30],
      ["hold", "d", 80],
    ],
    keep: "d",
    evicted: ["a", "b", "c"],
    left: ["d"],
  },
];

describe("host budget", () => {
  for (const testCase of cases) {
    it(testCase.name, () => {
      const budget = createHostBudget(testCase.budget);
      for (const step of testCase.steps) {
        if (step[0] === "hold") budget.hold(step[1], step[2]);
        else budget.touch(step[1]);
      }
      expect(budget.evict(testCase.keep)).toEqual(testCase.evicted);
      expect(budget.hosts()).toEqual(testCase.left);
    });
  }

  it("touching a host it does not hold says so and changes nothing", () => {
    const budget = createHostBudget(100);
    budget.hold("a", 10);
    expect(budget.touch("b")).toBe(false);
    expect(budget.hosts()).toEqual(["a"]);
    expect(budget.totalBytes()).toBe(10);
  });
});
