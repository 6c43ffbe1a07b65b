/**
 * Lower-case field names of a backend's response head, read from undici's raw header buffers. The names a
 * response usually carries are matched in place (no string made per field, as undici does for its own
 * header objects); any other name is decoded as Latin-1 and lower-cased. RFC 9110 §5.1: field names are
 * case-insensitive tokens, so the lower-case spelling is the same field.
 */
const COMMON_RESPONSE_FIELDS = [
  "accept-ranges",
  "access-control-allow-credentials",
  "access-control-allow-headers",
  "access-control-allow-methods",
  "access-control-allow-origin",
  "access-control-expose-headers",
  "age",
  "alt-svc",
  "cache-control",
  "connection",
  "content-disposition",
  "content-encoding",
  "content-language",
  "content-length",
  "content-location",
  "content-range",
  "content-security-policy",
  "content-type",
  "date",
  "etag",
  "expires",
  "keep-alive",
  "last-modified",
  "link",
  "location",
  "pragma",
  "proxy-authenticate",
  "referrer-policy",
  "retry-after",
  "server",
  "set-cookie",
  "strict-transport-security",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "vary",
  "via",
  "www-authenticate",
  "x-content-type-options",
  "x-frame-options",
  "x-powered-by",
  "x-request-id",
  "x-xss-protection",
];

const BY_LENGTH: string[][] = [];
for (const name of COMMON_RESPONSE_FIELDS) {
  let bucket = BY_LENGTH[name.length];
  if (!bucket) {
    bucket = [];
    BY_LENGTH[name.length] = bucket;
  }
  bucket.push(name);
}

/** The field name of `raw` in lower case. */
export function lowerCaseFieldName(raw: Uint8Array): string {
  const candidates = BY_LENGTH[raw.length];
  if (candidates) {
    for (const name of candidates) if (sameIgnoringAsciiCase(raw, name)) return name;
  }
  return Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString("latin1").toLowerCase();
}

function sameIgnoringAsciiCase(raw: Uint8Array, lower: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    let code = raw[i] as number;
    if (code >= 65 && code <= 90) code |= 32;
    if (code !== lower.charCodeAt(i)) return false;
  }
  return true;
}
