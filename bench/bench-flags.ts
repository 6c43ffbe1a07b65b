import { readCommandLine } from "../lib/command-line.js";
import { EXIT_CODES } from "../lib/exit-codes.js";
import { createJsonLogger } from "../lib/logger.js";

/** What `--only` may name (bench/README.md). */
export const BENCH_PARTS = [
  "proxy",
  "profile",
  "convergence",
  "workers",
  "metrics",
  "steering",
  "scale",
  "h2",
] as const;
export type BenchPart = (typeof BENCH_PARTS)[number];

const COMMAND = "npm run bench --";

const USAGE = `Usage: ${COMMAND} [flags]   (every part, several minutes; bench/README.md says what each measures)

  --smoke           short runs and small sets: a check that the harness works, not figures to quote
  --only PART       run one part: ${BENCH_PARTS.join(", ")} (profile: the router's CPU profile alone)
  --duration S      seconds of each proxy run
  --warmup S        seconds of warm-up before each proxy run
  --rounds N        rounds of each proxy cell
  --minimal-only    the proxy bench against the minimal proxy only
  --access-log      add the router with ACCESS_LOG=true as a proxy target
  --no-pin          do not pin the processes to CPUs
  --no-profile      skip the router's CPU profile
  --help            show this text`;

const FLAGS = {
  smoke: { type: "boolean", default: false },
  only: { type: "string" },
  duration: { type: "string" },
  warmup: { type: "string" },
  rounds: { type: "string" },
  "minimal-only": { type: "boolean", default: false },
  "access-log": { type: "boolean", default: false },
  "no-pin": { type: "boolean", default: false },
  "no-profile": { type: "boolean", default: false },
} as const;

export interface BenchFlags {
  readonly smoke: boolean;
  /** Undefined: every part. */
  readonly only: BenchPart | undefined;
  readonly durationSeconds: number | undefined;
  readonly warmupSeconds: number | undefined;
  readonly rounds: number | undefined;
  readonly minimalOnly: boolean;
  readonly accessLog: boolean;
  readonly pin: boolean;
  readonly profile: boolean;
}

/**
 * The bench's flags, or the exit code it ends with at once: `--help`, or a flag it does not know or a value
 * it cannot use (one error line, exit 2), so a typo never starts the whole run.
 */
export function readBenchFlags(argv: readonly string[]): BenchFlags | { readonly exitCode: number } {
  const logger = createJsonLogger({
    write: (line) => process.stderr.write(`${line}\n`),
    base: { component: "bench" },
  });
  const line = readCommandLine(argv, {
    command: COMMAND,
    options: FLAGS,
    usage: USAGE,
    print: (text) => process.stdout.write(text),
    logger,
  });
  if (!line.run) return { exitCode: line.exitCode };
  const { flags } = line;
  const problems: string[] = [];
  const only = flags.only;
  if (only !== undefined && !isPart(only))
    problems.push(`--only ${only}: name one of ${BENCH_PARTS.join(", ")}`);
  const number = (flag: string, text: string | undefined, min: number) => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || value < min) {
      problems.push(`--${flag} ${text}: give a number of at least ${min}`);
    }
    return value;
  };
  const durationSeconds = number("duration", flags.duration, 1);
  const warmupSeconds = number("warmup", flags.warmup, 0);
  const rounds = number("rounds", flags.rounds, 1);
  if (problems.length > 0) {
    logger.error(`${problems.join("; ")} (\`${COMMAND} --help\` lists the flags)`);
    return { exitCode: EXIT_CODES.usage };
  }
  return {
    smoke: flags.smoke,
    only: only !== undefined && isPart(only) ? only : undefined,
    durationSeconds,
    warmupSeconds,
    rounds,
    minimalOnly: flags["minimal-only"],
    accessLog: flags["access-log"],
    pin: !flags["no-pin"],
    profile: !flags["no-profile"],
  };
}

function isPart(text: string): text is BenchPart {
  return (BENCH_PARTS as readonly string[]).includes(text);
}
