import { createJsonLogger } from "../../lib/logger.js";
import { normaliseHost } from "../core/http/hosts.js";
import { ADMIN_PREFIX } from "../core/http/request-target.js";
import { parseRouterConfig } from "../core/settings/config.js";
import { NO_GRANTS_WARNING } from "../core/trust/cluster-grants.js";
import { createIsolateRuntime, type IsolateRuntime } from "./runtime.js";

/**
 * Cloudflare Workers entry (wrangler.toml `main`): the Worker's env becomes the router's config and its pod
 * fetch client; the isolate's runtime (runtime.ts) is built on the first request and serves every one after.
 * @example npx wrangler dev
 */

/** A fetch-capable binding, e.g. a Workers VPC network binding. */
interface FetchBinding {
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>;
}

/** The Worker's environment: the vars and secrets of wrangler.toml, plus the optional VPC binding. */
export interface WorkerEnv {
  readonly [name: string]: unknown;
  /**
   * Workers VPC network binding (Cloudflare Tunnel) for pod traffic. Deployed Workers cannot fetch raw IPs
   * or private ranges, which pod IPs are, so without it only public or (under wrangler dev) loopback
   * backends are reachable.
   */
  readonly POD_NETWORK?: FetchBinding;
}

/** The parts of the Workers ExecutionContext this entry uses; passed on to Hono as its execution context. */
interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
  readonly props: unknown;
}

let runtime: IsolateRuntime | undefined;

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: WorkerContext): Promise<Response> {
    if (!runtime) {
      try {
        const config = parseRouterConfig(env);
        runtime = createIsolateRuntime(config, podFetch(env));
        if (config.clusterGrants === undefined) {
          createJsonLogger({
            level: config.logLevel,
            base: { component: "router", runtime: "workers" },
          }).warn(NO_GRANTS_WARNING);
        }
      } catch (error) {
        // A bad var or secret: say which, on every request, instead of an opaque exception.
        console.error(JSON.stringify({ level: "error", msg: "invalid configuration", error: String(error) }));
        return Response.json({ error: "invalid_configuration" }, { status: 500 });
      }
    }
    await runtime.source.prepare(coldHostOf(request), (promise) => ctx.waitUntil(promise));
    return runtime.app.fetch(request, env, ctx);
  },
};

function podFetch(env: WorkerEnv): typeof fetch {
  const binding = env.POD_NETWORK;
  return binding
    ? (input, init) => binding.fetch(input instanceof Request ? input : String(input), init)
    : (input, init) => fetch(input, init);
}

/** The host a cold isolate may read alone before answering; undefined for what needs the whole store. */
function coldHostOf(request: Request): string | undefined {
  const url = new URL(request.url);
  return url.pathname.startsWith(ADMIN_PREFIX) ? undefined : normaliseHost(url.host);
}
