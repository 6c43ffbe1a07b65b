/** The port of a Host header or URL authority, when it names one. */
export function authorityPort(authority: string): number | undefined {
  const end = authority.startsWith("[") ? authority.indexOf("]") + 1 : 0;
  const colon = authority.indexOf(":", end);
  if (colon < 0) return undefined;
  const port = Number(authority.slice(colon + 1));
  return Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
}
