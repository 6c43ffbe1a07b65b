/**
 * The router's own answer to a HEAD: the status and header fields its GET would carry, Content-Length
 * included, and no content (RFC 9110 §9.3.2: "The server SHOULD send the same header fields in response to a
 * HEAD request as it would have sent if the request method had been GET"). A Response with a body would lose
 * its length on the way out (the adapter drops HEAD bodies, and with them the framing).
 */
export function headAnswer(
  status: number,
  headers: readonly (readonly [string, string])[],
  body: string,
): Response {
  const fields = new Headers(headers.map(([name, value]) => [name, value]));
  fields.set("content-length", String(new TextEncoder().encode(body).byteLength));
  return new Response(null, { status, headers: fields });
}
