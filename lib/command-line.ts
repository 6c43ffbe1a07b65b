import { type ParseArgsConfig, parseArgs } from "node:util";
import { EXIT_CODES } from "./exit-codes.js";
import type { Logger } from "./logger.js";

type FlagOptions = NonNullable<ParseArgsConfig["options"]>;
type WithHelp<O extends FlagOptions> = O & {
  readonly help: { readonly type: "boolean" };
  readonly version: { readonly type: "boolean" };
};
type FlagValues<O extends FlagOptions> = ReturnType<
  typeof parseArgs<{ args: string[]; options: WithHelp<O>; strict: true; allowPositionals: false }>
>["values"];

/** The flags to run with, or the exit code the command ends with at once (`--help`, or a usage error). */
export type CommandLine<O extends FlagOptions> =
  | { readonly run: true; readonly flags: FlagValues<O> }
  | { readonly run: false; readonly exitCode: number };

export interface CommandLineSpec<O extends FlagOptions> {
  /** How the command is started, for the error line: `node dist/sync.js`. */
  readonly command: string;
  /** The flags besides `--help`, which every command has. */
  readonly options: O;
  /** The text `--help` prints. */
  readonly usage: string;
  /** The line `--version` prints (lib/build-info.ts); a command without one refuses `--version`. */
  readonly version?: string;
  /** Where `--help` writes (stdout). */
  readonly print: (text: string) => void;
  /** Where a usage error goes: one line at error level. */
  readonly logger: Logger;
}

/**
 * Reads a command's flags strictly: no positional arguments, no unknown flag. `--help` prints the usage and
 * `--version` the version line, each ending the command with 0; a wrong command line is one error line naming the argument and the way to the
 * usage, and ends it with EXIT_CODES.usage.
 *
 * @example
 * const line = readCommandLine(process.argv.slice(2), { command: "node dist/router.js", options: {}, usage, print, logger });
 * if (!line.run) process.exit(line.exitCode);
 */
export function readCommandLine<O extends FlagOptions>(
  argv: readonly string[],
  spec: CommandLineSpec<O>,
): CommandLine<O> {
  const options = {
    ...spec.options,
    help: { type: "boolean" },
    ...(spec.version === undefined ? {} : { version: { type: "boolean" } }),
  } as WithHelp<O>;
  let flags: FlagValues<O>;
  try {
    flags = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    spec.logger.error(`${firstSentence(error)}: run \`${spec.command} --help\` for the options it takes`);
    return { run: false, exitCode: EXIT_CODES.usage };
  }
  if ((flags as { readonly help?: boolean }).help === true) {
    spec.print(`${spec.usage}\n`);
    return { run: false, exitCode: EXIT_CODES.ok };
  }
  if ((flags as { readonly version?: boolean }).version === true) {
    spec.print(`${spec.version}\n`);
    return { run: false, exitCode: EXIT_CODES.ok };
  }
  return { run: true, flags };
}

/** node:util's parse errors name the argument in their first sentence; the rest is advice for other CLIs. */
function firstSentence(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split(". ")[0] ?? message;
}
