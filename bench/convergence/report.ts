import { fixed, ratio, verdict } from "../support/table.js";
import type { ConvergenceResult } from "./convergence-bench.js";

const MiB = 1024 * 1024;
/** The sync's memory target at 1,000 Services / 20,000 endpoints, after its first full sync. */
const RSS_TARGET_MIB = 150;

/** The check table: change latency, command growth with size, lost changes, and the sync's memory. */
export function checkRows(results: readonly ConvergenceResult[]): string[][] {
  const defaults = results.filter((r) => r.label === results[0]?.label);
  const smallest = defaults[0];
  const largest = defaults[defaults.length - 1];
  const lost = results.reduce((sum, r) => sum + (r.changes - r.observed), 0);
  const perWrite = (r: ConvergenceResult) => r.writerCommandsPerChange / r.writesPerChange;
  return [
    ...results.map((r) => [
      `change → reader p99, ${r.services} Services (${r.label})`,
      `${fixed(r.p99Ms, 1)} ms`,
      "< 250 ms",
      ratio(r.p99Ms, 250),
      verdict(r.p99Ms < 250),
    ]),
    ...(smallest && largest && smallest !== largest
      ? [
          [
            `writer cmds/write ${largest.services} vs ${smallest.services} Services`,
            `${fixed(perWrite(largest), 2)} vs ${fixed(perWrite(smallest), 2)}`,
            "no growth (ratio ~1x)",
            ratio(perWrite(largest), perWrite(smallest)),
            verdict(perWrite(largest) <= perWrite(smallest) * 1.2),
          ],
          [
            `all cmds/change ${largest.services} vs ${smallest.services} Services`,
            `${fixed(largest.commandsPerChange, 2)} vs ${fixed(smallest.commandsPerChange, 2)}`,
            "no growth (ratio ~1x)",
            ratio(largest.commandsPerChange, smallest.commandsPerChange),
            verdict(largest.commandsPerChange <= smallest.commandsPerChange * 1.2),
          ],
        ]
      : []),
    ["changes never seen by the reader", String(lost), "0", "", verdict(lost === 0)],
    ...(largest
      ? [
          [
            `sync RSS after the first full sync, ${largest.services} Services (${largest.runner})`,
            `${fixed(largest.memoryAfterSync.rssBytes / MiB, 1)} MiB`,
            `< ${RSS_TARGET_MIB} MiB`,
            ratio(largest.memoryAfterSync.rssBytes / MiB, RSS_TARGET_MIB),
            verdict(largest.memoryAfterSync.rssBytes / MiB < RSS_TARGET_MIB),
          ],
        ]
      : []),
  ];
}
