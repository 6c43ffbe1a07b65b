import { createJsonLogger, type Logger, type LogLevel } from "../../lib/logger.js";

export interface LogEntry {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** A Logger that keeps what it was told, so tests can assert that a bad object was reported. */
export function recordingLogger(): { logger: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      entries.push({ level, message, fields });
    };
  return { logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }, entries };
}

/** A logger that keeps its lines, for tests that check what was logged. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: createJsonLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) }),
  };
}
