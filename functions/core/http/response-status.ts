/**
 * RFC 9110 §15: a status code is three digits from 100 to 599, and 1xx answers are interim, so a final answer
 * is 200-599, or 101 (Switching Protocols, §15.2.2) to an upgrade request. An answer with any other status is
 * invalid: it is not relayed, and the attempt failed as the transport's (a 502).
 */
export function isFinalStatus(status: number, upgrade: boolean): boolean {
  return (status >= 200 && status <= 599) || (upgrade && status === 101);
}

/**
 * RFC 9110 §8.6: a 1xx or 204 response carries no Content-Length. A 304's may state the size of the 200 it
 * stands for (§8.6, §15.4.5), so it is relayed.
 */
export function forbidsContentLength(status: number): boolean {
  return status === 204 || (status >= 100 && status < 200);
}
