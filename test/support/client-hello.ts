/**
 * ClientHello bytes built by hand (RFC 8446 §4.1.2 layout), for the parser's table tests and raw-socket tests:
 * a server_name extension with the names given (none: no extension), padding extensions to grow the hello,
 * and the handshake message split into records of at most `recordSize` bytes.
 */
export interface HelloShape {
  /** Host names in one server_name extension; undefined: no server_name extension at all. */
  readonly serverNames?: readonly string[];
  /** Raw server_name extension data instead of one built from serverNames. */
  readonly serverNameData?: Uint8Array;
  /** Bytes of a padding extension (type 21) added before server_name. */
  readonly padding?: number;
  /** The handshake message is split into records of this many bytes at most (default: one record). */
  readonly recordSize?: number;
  /** No extensions block at all (TLS 1.2 and older may omit it). */
  readonly noExtensions?: boolean;
}

const u16 = (value: number) => [(value >> 8) & 0xff, value & 0xff];
const u24 = (value: number) => [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];

export function extension(type: number, data: readonly number[]): number[] {
  return [...u16(type), ...u16(data.length), ...data];
}

export function serverNameData(names: readonly string[]): number[] {
  const entries = names.flatMap((name) => {
    const bytes = [...Buffer.from(name, "latin1")];
    return [0, ...u16(bytes.length), ...bytes];
  });
  return [...u16(entries.length), ...entries];
}

/** The ClientHello handshake message (type 1, its 3-byte length, then the body). */
export function clientHelloMessage(shape: HelloShape = {}): number[] {
  const extensions: number[] = [];
  if (shape.padding !== undefined) extensions.push(...extension(21, new Array(shape.padding).fill(0)));
  if (shape.serverNameData) extensions.push(...extension(0, [...shape.serverNameData]));
  else if (shape.serverNames) extensions.push(...extension(0, serverNameData(shape.serverNames)));
  // supported_versions: TLS 1.3, so the hello looks like a modern client's.
  extensions.push(...extension(43, [2, 3, 4]));
  const body = [
    3,
    3,
    ...new Array(32).fill(7),
    0, // empty legacy_session_id
    ...u16(2),
    0x13,
    0x01, // TLS_AES_128_GCM_SHA256
    1,
    0, // compression: null
    ...(shape.noExtensions ? [] : [...u16(extensions.length), ...extensions]),
  ];
  return [1, ...u24(body.length), ...body];
}

/** The hello as the client sends it: handshake records of at most `recordSize` bytes each. */
export function clientHelloBytes(shape: HelloShape = {}): Buffer {
  const message = clientHelloMessage(shape);
  const size = shape.recordSize ?? message.length;
  const records: number[] = [];
  for (let at = 0; at < message.length; at += size) {
    const fragment = message.slice(at, at + size);
    records.push(22, 3, 1, ...u16(fragment.length), ...fragment);
  }
  return Buffer.from(records);
}
