import { Agent, request } from "undici";

/**
 * Client traffic against the router: a bounded number of concurrent loops sending requests until stopped,
 * counting every outcome (status code, or the client-side error) so a test can assert that nothing failed.
 */
export interface TrafficReport {
  readonly statuses: ReadonlyMap<number, number>;
  readonly clientErrors: readonly string[];
  /** Backend names from `x-backend`, in arrival order. */
  readonly backends: readonly string[];
  readonly total: number;
}

export interface Traffic {
  /** Requests completed so far. */
  readonly completed: number;
  readonly backends: readonly string[];
  stop(): Promise<TrafficReport>;
}

export function startTraffic(
  url: string,
  options: { host: string; path?: string; concurrency?: number; method?: string; timeoutMs?: number },
): Traffic {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: options.concurrency ?? 4 });
  const statuses = new Map<number, number>();
  const clientErrors: string[] = [];
  const backends: string[] = [];
  let stopped = false;
  let completed = 0;
  const loop = async () => {
    while (!stopped) {
      try {
        const response = await request(`${url}${options.path ?? "/"}`, {
          method: (options.method ?? "GET") as "GET",
          headers: { host: options.host },
          dispatcher: agent,
          headersTimeout: options.timeoutMs ?? 5_000,
          bodyTimeout: options.timeoutMs ?? 5_000,
        });
        await response.body.text();
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        const backend = response.headers["x-backend"];
        if (typeof backend === "string") backends.push(backend);
      } catch (error) {
        clientErrors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      }
      completed++;
      // Yield so the router, backends and Redis in this process get their turn.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  const loops = Array.from({ length: options.concurrency ?? 4 }, loop);
  return {
    get completed() {
      return completed;
    },
    backends,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      await agent.close();
      return { statuses, clientErrors, backends, total: completed };
    },
  };
}

/** One request; the status, the `x-backend` header and the body. */
export async function fetchOnce(
  url: string,
  host: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<{ status: number; backend: string | undefined; body: string }> {
  const response = await request(url, {
    method: (init.method ?? "GET") as "GET",
    headers: { host, ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const body = await response.body.text();
  const backend = response.headers["x-backend"];
  return { status: response.statusCode, backend: typeof backend === "string" ? backend : undefined, body };
}
