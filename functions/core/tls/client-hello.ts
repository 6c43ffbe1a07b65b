/**
 * The server name of a TLS connection, read from the client's first bytes before any TLS is ended: the
 * ClientHello (RFC 8446 §4.1.2; RFC 5246 §7.4.1.2 for TLS 1.2 and older), carried in handshake records
 * (RFC 8446 §5.1, which lets a handshake message span several records), and its server_name extension
 * (RFC 6066 §3). Pure and bounded: a hello larger than MAX_CLIENT_HELLO_BYTES is refused, never buffered.
 */

/** What the bytes gathered so far say. */
export type ClientHelloRead =
  | { readonly kind: "incomplete" }
  /** `serverName` lower case, without a trailing dot; undefined when the client sent none. */
  | { readonly kind: "hello"; readonly serverName: string | undefined }
  | { readonly kind: "invalid"; readonly reason: string };

/**
 * Real ClientHellos are well under 2 KiB (post-quantum key shares included); the handshake layer allows far
 * more, but a router need not hold more than this per connection before it knows where it goes.
 */
export const MAX_CLIENT_HELLO_BYTES = 16 * 1024;

const RECORD_HEADER = 5;
const CONTENT_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;
const EXTENSION_SERVER_NAME = 0;
const NAME_TYPE_HOST_NAME = 0;
/** A record's fragment is at most 2^14 bytes (RFC 8446 §5.1). */
const MAX_RECORD_PAYLOAD = 16_384;
/** A DNS name of at most 253 characters, ASCII letters, digits, hyphens and dots (RFC 6066 §3, RFC 1035). */
const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

const INCOMPLETE: ClientHelloRead = { kind: "incomplete" };
const invalid = (reason: string): ClientHelloRead => ({ kind: "invalid", reason });

/** Reads the ClientHello from a connection's first bytes (what arrived so far; call again with more). */
export function readClientHello(bytes: Uint8Array): ClientHelloRead {
  const message = handshakeMessage(bytes);
  if ("kind" in message) return message;
  return serverNameOf(message.body);
}

/**
 * The first handshake message, gathered from as many handshake records as it spans, or why there is none
 * (yet). The record layer's version is not checked beyond its major byte: clients send 0x0301 for
 * compatibility (RFC 8446 §5.1), and the TLS server that ends the connection decides versions.
 */
function handshakeMessage(bytes: Uint8Array): { readonly body: Uint8Array } | ClientHelloRead {
  const gathered: Uint8Array[] = [];
  let length = 0;
  let needed = -1;
  for (let at = 0; ; ) {
    const problem = headerProblem(bytes, at);
    if (problem) return problem;
    if (bytes.length < at + RECORD_HEADER) return INCOMPLETE;
    const payload = ((bytes[at + 3] as number) << 8) | (bytes[at + 4] as number);
    if (payload === 0 || payload > MAX_RECORD_PAYLOAD)
      return invalid(`a handshake record of ${payload} bytes`);
    const start = at + RECORD_HEADER;
    const end = Math.min(start + payload, bytes.length);
    gathered.push(bytes.subarray(start, end));
    length += end - start;
    if (needed < 0 && length >= 4) {
      const head = concatenated(gathered, 4);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO)
        return invalid(`handshake message ${head[0]} is not a ClientHello`);
      needed = ((head[1] as number) << 16) | ((head[2] as number) << 8) | (head[3] as number);
      if (needed > MAX_CLIENT_HELLO_BYTES) return invalid(`a ClientHello of ${needed} bytes`);
    }
    if (needed >= 0 && length >= needed + 4) break;
    if (end < start + payload) return INCOMPLETE;
    at = end;
  }
  const whole = concatenated(gathered, needed + 4);
  return { body: whole.subarray(4, needed + 4) };
}

/** Undefined while what is there of a record header could be a handshake record's. */
function headerProblem(bytes: Uint8Array, at: number): ClientHelloRead | undefined {
  if (bytes.length > at && bytes[at] !== CONTENT_HANDSHAKE) {
    return invalid(at === 0 ? "not a TLS handshake" : "a ClientHello interrupted by another record type");
  }
  if (bytes.length > at + 1 && bytes[at + 1] !== 3) return invalid("not a TLS record version");
  return undefined;
}

function concatenated(parts: readonly Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1 && (parts[0] as Uint8Array).length >= length) {
    return (parts[0] as Uint8Array).subarray(0, length);
  }
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    if (offset >= length) break;
    const take = part.subarray(0, length - offset);
    out.set(take, offset);
    offset += take.length;
  }
  return out;
}

/** A bounds-checked reader over the ClientHello body: every read past the end makes it `broken`. */
class Cursor {
  broken = false;
  #at = 0;
  readonly #bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  get left(): number {
    return this.#bytes.length - this.#at;
  }

  skip(count: number): void {
    if (count > this.left) this.broken = true;
    this.#at = Math.min(this.#at + count, this.#bytes.length);
  }

  uint(size: 1 | 2): number {
    if (size > this.left) {
      this.broken = true;
      return 0;
    }
    const at = this.#at;
    this.#at += size;
    return size === 1
      ? (this.#bytes[at] as number)
      : ((this.#bytes[at] as number) << 8) | (this.#bytes[at + 1] as number);
  }

  /** A vector with a `size`-byte length prefix, as a cursor of its own. */
  vector(size: 1 | 2): Cursor {
    const length = this.uint(size);
    const start = this.#at;
    this.skip(length);
    return new Cursor(this.broken ? new Uint8Array() : this.#bytes.subarray(start, start + length));
  }

  bytes(): Uint8Array {
    return this.#bytes.subarray(this.#at);
  }
}

/** ClientHello: legacy_version, random, session id, cipher suites, compression methods, then extensions. */
function serverNameOf(body: Uint8Array): ClientHelloRead {
  const hello = new Cursor(body);
  hello.skip(2 + 32);
  hello.vector(1);
  hello.vector(2);
  hello.vector(1);
  if (hello.broken) return invalid("a truncated ClientHello");
  // TLS 1.2 and older may end the hello here: no extensions, so no server name.
  if (hello.left === 0) return { kind: "hello", serverName: undefined };
  const extensions = hello.vector(2);
  if (hello.broken) return invalid("truncated ClientHello extensions");
  let serverName: string | undefined;
  let seen = false;
  while (extensions.left > 0) {
    const type = extensions.uint(2);
    const data = extensions.vector(2);
    if (extensions.broken) return invalid("a truncated ClientHello extension");
    if (type !== EXTENSION_SERVER_NAME) continue;
    // RFC 8446 §4.2: "There MUST NOT be more than one extension of the same type in a given extension block."
    if (seen) return invalid("two server_name extensions");
    seen = true;
    const name = hostNameOf(data);
    if (typeof name !== "string" && name !== undefined) return name;
    serverName = name;
  }
  return { kind: "hello", serverName };
}

/** server_name: a list of (name_type, name); one host_name at most (RFC 6066 §3). */
function hostNameOf(data: Cursor): string | undefined | ClientHelloRead {
  const list = data.vector(2);
  if (data.broken || data.left !== 0) return invalid("a malformed server_name extension");
  let found: string | undefined;
  while (list.left > 0) {
    const type = list.uint(1);
    const name = list.vector(2);
    if (list.broken) return invalid("a malformed server_name entry");
    if (type !== NAME_TYPE_HOST_NAME) continue;
    if (found !== undefined) return invalid("two host names in server_name");
    if (name.left > 254) return invalid("a server name longer than a DNS name");
    const text = asciiLower(name.bytes());
    const trimmed = text?.endsWith(".") ? text.slice(0, -1) : text;
    if (trimmed === undefined || trimmed.length > 253 || !HOST_NAME.test(trimmed)) {
      return invalid("a server name that is no DNS host name");
    }
    found = trimmed;
  }
  return found;
}

function asciiLower(bytes: Uint8Array): string | undefined {
  let text = "";
  for (const byte of bytes) {
    if (byte < 0x21 || byte > 0x7e) return undefined;
    text += String.fromCharCode(byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte);
  }
  return text;
}

/**
 * The fatal `unrecognized_name` alert (RFC 6066 §3: a server that does not recognise the name "SHOULD" end
 * the handshake with it; RFC 8446 §6.2 code 112), as one plaintext record sent before any ServerHello, which
 * every TLS version's client reads: curl and browsers then name the problem instead of a reset.
 */
export const UNRECOGNIZED_NAME_ALERT: Uint8Array = Uint8Array.of(21, 3, 3, 0, 2, 2, 112);
