/**
 * Structured logging shared by both sides so operators get one line format: a JSON object per line with
 * `level`, `msg`, `time` and the caller's fields.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createJsonLogger(options: {
  level?: LogLevel;
  write?: (line: string) => void;
  base?: Record<string, unknown>;
  now?: () => number;
}): Logger {
  const threshold = LEVEL_ORDER[options.level ?? "info"];
  const write = options.write ?? ((line: string) => console.log(line));
  const now = options.now ?? Date.now;
  const emit = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (LEVEL_ORDER[level] < threshold) return;
    write(
      JSON.stringify(
        { time: new Date(now()).toISOString(), level, msg: message, ...options.base, ...fields },
        errorsAsText,
      ),
    );
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

/** A logger that drops everything: for tests that do not look at logs. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function errorsAsText(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
