import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { functionSpans, functionsOver, sourceFiles } from "./function-spans.js";

/**
 * The house rule "functions stay under 80 lines" (a closure counts its whole body, a class's methods count one
 * by one), read from a real parser's tree of every production file.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const PRODUCTION = ["lib", "store", "functions", "sync"] as const;
const MAX_LINES = 80;

const files = sourceFiles(ROOT, PRODUCTION);
const over = functionsOver(ROOT, files, MAX_LINES);

describe("the length of production functions", () => {
  it("counts a closure's whole body, each inner function again, and a class's methods one by one", () => {
    const filler = (count: number) =>
      Array.from({ length: count }, (_, index) => `  const v${index} = ${index};`);
    const source = [
      "export function outer() {",
      ...filler(3),
      "  const inner = (x: number): number => {",
      "    return x;",
      "  };",
      "  return inner;",
      "}",
      "class Machine {",
      "  #state = 0;",
      "  step(): void {",
      "    this.#state++;",
      "  }",
      "  #reset() { this.#state = 0; }",
      "}",
      "list.map(async function named() { return 1; });",
      "queue.on('data', () => 2);",
      "export default { handler: () => 3 };",
    ].join("\n");
    expect(functionSpans(source)).toEqual([
      { name: "outer", lines: 9 },
      { name: "outer > inner", lines: 3 },
      { name: "Machine > step", lines: 3 },
      { name: "Machine > #reset", lines: 1 },
      { name: "named", lines: 1 },
      { name: "queue.on(…)", lines: 1 },
      { name: "handler", lines: 1 },
    ]);
  });

  it("reads every production file", () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files.filter((file) => file.startsWith("sync/")).length).toBeGreaterThan(50);
  });

  it(`keeps every production function within ${MAX_LINES} lines`, () => {
    expect([...over].map(([name, lines]) => `${name} (${lines} lines)`)).toEqual([]);
  });
});
