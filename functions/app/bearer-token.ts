/**
 * The token of an `Authorization: Bearer <token>` field; undefined for any other scheme or no token.
 * RFC 9110 §11.1: the auth-scheme is case-insensitive, and §11.4 (credentials = auth-scheme 1*SP token68)
 * allows more than one space before the token; RFC 6750 §2.1 names the scheme "Bearer".
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const space = authorization.indexOf(" ");
  if (space < 0 || authorization.slice(0, space).toLowerCase() !== "bearer") return undefined;
  const token = authorization.slice(space + 1).trim();
  return token === "" ? undefined : token;
}
