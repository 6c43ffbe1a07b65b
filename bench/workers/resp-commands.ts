/**
 * Names the commands in a client's byte stream to Redis, chunk by chunk as they arrive, however the chunks
 * split them. A client sends each command as a RESP array of bulk strings (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`);
 * a line not starting with `*` is an inline command (redis-cli, telnet), named by its first word.
 * Only the names are kept (upper-cased), never the arguments.
 */
export interface CommandReader {
  /** The names of the commands this chunk completed, in order. */
  push(chunk: Buffer): string[];
}

const CRLF = Buffer.from("\r\n");

export function createCommandReader(): CommandReader {
  let pending: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const names: string[] = [];
      let offset = 0;
      for (;;) {
        const parsed = parseCommand(pending, offset);
        if (parsed === undefined) break;
        names.push(parsed.name);
        offset = parsed.end;
      }
      pending = pending.subarray(offset);
      return names;
    },
  };
}

interface Parsed {
  readonly name: string;
  /** Offset just past the command. */
  readonly end: number;
}

/** One whole command at `offset`, or undefined when its bytes have not all arrived yet. */
function parseCommand(buffer: Buffer, offset: number): Parsed | undefined {
  if (offset >= buffer.length) return undefined;
  const headerEnd = buffer.indexOf(CRLF, offset);
  if (headerEnd < 0) return undefined;
  if (buffer[offset] !== 0x2a /* '*' */) {
    const line = buffer.toString("latin1", offset, headerEnd).trim();
    return { name: (line.split(/\s+/)[0] ?? "").toUpperCase(), end: headerEnd + 2 };
  }
  const count = Number(buffer.toString("latin1", offset + 1, headerEnd));
  let cursor = headerEnd + 2;
  let name = "";
  for (let argument = 0; argument < count; argument++) {
    const lengthEnd = buffer.indexOf(CRLF, cursor);
    if (lengthEnd < 0) return undefined;
    const length = Number(buffer.toString("latin1", cursor + 1, lengthEnd));
    const start = lengthEnd + 2;
    if (start + length + 2 > buffer.length) return undefined;
    if (argument === 0) name = buffer.toString("latin1", start, start + length).toUpperCase();
    cursor = start + length + 2;
  }
  return { name, end: cursor };
}
