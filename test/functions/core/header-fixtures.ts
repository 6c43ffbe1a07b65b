/** Header-rule inputs shared by the request and upgrade header tests. */
export const info = { clientIp: "192.0.2.7", proto: "https" as const, host: "app.example" };

/** Forwarding fields a client sends itself (raw header list): replaced by the router's unless the peer is trusted. */
export const CLIENT_FORWARDING_FIELDS = [
  "X-Forwarded-For",
  "203.0.113.1",
  "Forwarded",
  "for=203.0.113.1",
  "X-Forwarded-Proto",
  "gopher",
  "X-Forwarded-Host",
  "evil.example",
];

/** The request rules send Host before every other field (RFC 9112 §3.2), for `info`. */
export const HOST_FIRST = ["host", "app.example"];

/** What the request rules add after the client's fields, for `info`. */
export const forwardingOf = (xff = "192.0.2.7", forwarded = "for=192.0.2.7;host=app.example;proto=https") => [
  "x-forwarded-for",
  xff,
  "x-forwarded-proto",
  "https",
  "x-forwarded-host",
  "app.example",
  "forwarded",
  forwarded,
];

/** A flat name, value list as pairs sorted by name: to compare it with a web Headers' entries. */
export function sortedPairs(list: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i < list.length; i += 2) pairs.push([list[i] ?? "", list[i + 1] ?? ""]);
  return pairs.sort(([a], [b]) => a.localeCompare(b));
}

/** A raw name, value list as web Headers. */
export function webHeadersOf(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i] ?? "", raw[i + 1] ?? "");
  return headers;
}

/** A web Headers' entries sorted by name. */
export function sortedEntries(headers: Headers): [string, string][] {
  return [...headers.entries()].sort(([a], [b]) => a.localeCompare(b));
}
