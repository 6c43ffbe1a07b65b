import type { Pool } from "undici";
import type { EchoedRequest } from "./echo-backends.js";

/** One answer through the router: its status and headers, and the echo when a backend answered. */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly echo: EchoedRequest | undefined;
  readonly body: string;
}

export interface SendOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
}

/**
 * Requests to a router by Host, as `curl -H 'Host: …'` sends them, over `pool` (undici, loopback), for tests
 * whose backends are echo backends (echo-backends.ts); explain goes over `adminPool`, to the router's admin listener.
 */
export function hostClient(pool: Pool, adminToken: string, adminPool: Pool = pool) {
  const send = async (host: string, path: string, options: SendOptions = {}): Promise<Answer> => {
    const response = await pool.request({
      method: (options.method ?? "GET") as "GET",
      path,
      headers: { host, ...options.headers },
    });
    const body = await response.body.text();
    // A HEAD answer carries the backend's fields without the echo.
    const echoed = typeof response.headers["x-backend"] === "string" && body !== "";
    return {
      status: response.statusCode,
      headers: response.headers,
      echo: echoed ? (JSON.parse(body) as EchoedRequest) : undefined,
      body,
    };
  };
  return {
    send,
    /** The backend that answered, or the router's own status. */
    async who(host: string, path: string, options?: SendOptions): Promise<string> {
      const answer = await send(host, path, options);
      return answer.echo?.backend ?? String(answer.status);
    },
    /** Waits until a backend answers `host` and `path` (the sync published, the router reloaded). */
    async untilProxied(host: string, path: string, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while ((await send(host, path)).echo === undefined) {
        if (Date.now() > deadline) throw new Error(`${host}${path} was never routed to a backend`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    /** `/_edgeslice/explain?<query>` as JSON. */
    async explain(query: string): Promise<Record<string, unknown>> {
      const response = await adminPool.request({
        method: "GET",
        path: `/_edgeslice/explain?${query}`,
        headers: { authorization: `Bearer ${adminToken}` },
      });
      return (await response.body.json()) as Record<string, unknown>;
    },
  };
}
