import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What an echo backend saw of one request: enough to check what a rewrite or a header filter did. */
export interface EchoedRequest {
  readonly backend: string;
  readonly method: string;
  /** The request target exactly as it arrived (path and query). */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/** An HTTP backend on 127.0.0.1 answering 200 with its name in `x-backend` and the request as JSON. */
export interface EchoBackend {
  readonly name: string;
  readonly ip: "127.0.0.1";
  readonly port: number;
  hits(): number;
}

/**
 * `X-Echo-Set-Header: Name:value,Other:value` makes the echo answer carry those fields, as the conformance
 * suite's echo server does, so a ResponseHeaderModifier has the backend's fields to replace or remove.
 */
export const ECHO_SET_HEADER = "x-echo-set-header";

function echoSetHeaders(value: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (Array.isArray(value) ? value.join(",") : (value ?? "")).split(",")) {
    const colon = item.indexOf(":");
    if (colon > 0) out[item.slice(0, colon).trim()] = item.slice(colon + 1).trim();
  }
  return out;
}

/** Header every echo answer carries, so a ResponseHeaderModifier has something of the backend's to remove. */
export const BACKEND_ONLY_HEADER = "x-backend-internal";

export interface EchoFleet {
  /** Starts one backend per name, in parallel. */
  start(names: readonly string[]): Promise<Map<string, EchoBackend>>;
  /** Every backend's name → requests it received. */
  hitsByName(): Map<string, number>;
  closeAll(): Promise<void>;
}

export function createEchoFleet(): EchoFleet {
  const servers: Server[] = [];
  const backends: EchoBackend[] = [];
  const startOne = async (name: string): Promise<EchoBackend> => {
    let hits = 0;
    const failed = new Map<string, number>();
    const server = createServer((request, response) => {
      hits++;
      request.resume();
      request.on("end", () => {
        if (failsForRetry(request.url ?? "", failed, response)) return;
        // `?delay=1s` or `?delay=500ms` holds the answer back, as the conformance suite's echo server does.
        const delay = delayMs(request.url ?? "");
        if (delay > 0) {
          const timer = setTimeout(() => answer(), delay);
          response.on("close", () => clearTimeout(timer));
          return;
        }
        answer();
      });
      const answer = () => {
        const echoed: EchoedRequest = {
          backend: name,
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
        };
        response.writeHead(200, {
          "content-type": "application/json",
          "x-backend": name,
          [BACKEND_ONLY_HEADER]: "secret",
          ...echoSetHeaders(request.headers[ECHO_SET_HEADER]),
        });
        response.end(JSON.stringify(echoed));
      };
    });
    servers.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const backend: EchoBackend = {
      name,
      ip: "127.0.0.1",
      port: (server.address() as AddressInfo).port,
      hits: () => hits,
    };
    backends.push(backend);
    return backend;
  };
  return {
    async start(names) {
      const started = await Promise.all(names.map(startOne));
      return new Map(started.map((backend) => [backend.name, backend]));
    },
    hitsByName: () => new Map(backends.map((backend) => [backend.name, backend.hits()])),
    async closeAll() {
      await Promise.all(
        servers.map((server) => {
          const closed = new Promise((resolve) => server.close(resolve));
          server.closeAllConnections();
          return closed;
        }),
      );
    },
  };
}

function delayMs(target: string): number {
  const found = /[?&]delay=([0-9]+)(ms|s)(?:&|$)/.exec(target);
  if (!found) return 0;
  return Number(found[1]) * (found[2] === "s" ? 1_000 : 1);
}

/**
 * Under `/retry/`, as the conformance suite's echo server simulates a flaky backend: the first `succeedAfter`
 * requests of one `uuid` fail, with status `responseCode` when given (no body), else with a TCP reset; later
 * ones are echoed. True when this request failed.
 */
function failsForRetry(target: string, failed: Map<string, number>, response: ServerResponse): boolean {
  if (!target.startsWith("/retry/")) return false;
  const query = new URLSearchParams(target.slice(target.indexOf("?") + 1));
  const uuid = query.get("uuid") ?? "";
  const succeedAfter = Number(query.get("succeedAfter"));
  const code = Number(query.get("responseCode"));
  const count = failed.get(uuid) ?? 0;
  if (uuid === "" || !Number.isInteger(succeedAfter) || count >= succeedAfter) return false;
  failed.set(uuid, count + 1);
  if (Number.isInteger(code) && code >= 100) response.writeHead(code, { "content-length": "0" }).end();
  else response.socket?.resetAndDestroy();
  return true;
}
