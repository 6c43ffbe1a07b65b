import { type IncomingMessage, METHODS, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Hono } from "hono";
import type { ServerStream } from "../../lib/http2/server-session.js";
import {
  type PipelineDeps,
  type PipelineOutput,
  PipelineRun,
  type ProxyRoute,
  type PipelineRun as Run,
} from "../app/request-pipeline.js";
import type { PolicyDeps } from "../core/forwarding/proxy-policy.js";
import type { ErrorAnswer, RouterError } from "../core/http/errors.js";
import { headAnswer } from "../core/http/head-answers.js";
import { errorAnswerWithRequestId, requestIdOf } from "../core/http/request-id.js";
import { methodProblem } from "../core/http/request-method.js";
import { isAdminPath, requestTarget } from "../core/http/request-target.js";
import type { MirrorTarget } from "../core/routes/mirrors.js";
import type { ClientSide } from "./clients/client-side.js";
import { Http1Client } from "./clients/http1-client.js";
import { Http2Client } from "./clients/http2-client.js";
import { UpgradeClient } from "./clients/upgrade-client.js";
import type { Dispatchers } from "./dispatchers.js";
import { Exchange } from "./exchange.js";
import { authorityProblem } from "./http2-front/authority.js";
import { sendMirrors } from "./mirrors.js";
import { RequestHead } from "./request-head.js";

/** What Node's HTTP/1.1 parser takes on a request line: an HTTP/2 :method is held to the same (core/http/request-method.ts). */
const HTTP1_METHODS: ReadonlySet<string> = new Set(METHODS);

export interface RequestHandlerDeps extends PipelineDeps {
  readonly dispatchers: Dispatchers;
  /** The public listener's own endpoints under /_edgeslice/ (the probes), a Hono app (app/app.ts). */
  readonly adminApp: Hono;
}

/**
 * The one request handler of the Node router: every front hands it its request as a ClientSide (clients/), which
 * goes through the head's checks, the request pipeline (app/request-pipeline.ts) and the exchange (exchange.ts).
 */
export class RequestHandler implements PipelineOutput<ClientSide, void> {
  readonly #deps: RequestHandlerDeps;
  /** Connections of upgrades under way or joined, cut when the router's drain ends. */
  readonly upgraded = new Set<Socket>();

  constructor(deps: RequestHandlerDeps) {
    this.#deps = deps;
  }

  /** http.Server's 'request': HTTP/1.x on PORT and HTTPS_PORT. */
  readonly http1 = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    const head = new RequestHead(incoming.rawHeaders);
    this.handle(new Http1Client(incoming, outgoing, head, this.#deps.trustedProxies));
  };

  /** A request of the HTTP/2 front (h2c prior knowledge on PORT, ALPN h2 on HTTPS_PORT), on its session's socket. */
  readonly http2 = (stream: ServerStream, socket: Socket): void => {
    const client = new Http2Client(stream, new RequestHead(stream.fields), socket, this.#deps.trustedProxies);
    const problem =
      authorityProblem(stream.authority, client.headers.host) ?? methodProblem(client.method, HTTP1_METHODS);
    this.handle(client, problem);
  };

  /** http.Server's 'upgrade': the raw socket of an HTTP/1.1 Upgrade (WebSocket). */
  readonly upgrade = (incoming: IncomingMessage, socket: Socket, head: Buffer): void => {
    const request = new RequestHead(incoming.rawHeaders);
    this.handle(new UpgradeClient(incoming, socket, head, request, this.upgraded, this.#deps.trustedProxies));
  };

  /** Serves one request from any front; `problem`: the front's own reason to refuse it. */
  handle(client: ClientSide, problem?: RouterError): void {
    try {
      const refused = problem ?? client.headers.problem ?? (client.url === "" ? "bad_request" : undefined);
      if (refused !== undefined) this.#refuse(client, refused);
      // The probes are plain requests: an upgrade under the prefix is routed, and refused (404) like any.
      else if (!client.upgrade && adminRequest(client.url)) {
        this.#admin(client).catch((error: unknown) => client.failed(error));
      } else {
        const outcome = new PipelineRun(this.#deps, client, this).run();
        if (outcome instanceof Promise) outcome.catch((error: unknown) => client.failed(error));
      }
    } catch (error) {
      client.failed(error);
    }
  }

  answer(run: Run<ClientSide, void>, answer: ErrorAnswer): void {
    run.request.answer(answer);
  }

  mirror(run: Run<ClientSide, void>, mirrors: readonly MirrorTarget[], route: ProxyRoute): void {
    sendMirrors(this.#deps.dispatchers, mirrors, run.request, route);
  }

  forward(run: Run<ClientSide, void>, route: ProxyRoute, deps: PolicyDeps): void {
    new Exchange(this.#deps.dispatchers, run.request, route, deps, run).run();
  }

  /** Refused before any routing: no service, and no time worth measuring. */
  #refuse(client: ClientSide, problem: RouterError): void {
    const full = errorAnswerWithRequestId(problem, requestIdOf(client.requestId, this.#deps.newRequestId));
    const answer = client.method === "HEAD" ? headAnswer(full) : full;
    const { metrics } = this.#deps.routing.policy;
    metrics.respond(metrics.red.unrouted, client.method, answer.status, 0);
    client.answer(answer);
  }

  /** The probes under /_edgeslice/ on the public listener, answered by the app (app/admin.ts). */
  async #admin(client: ClientSide): Promise<void> {
    const response = await this.#deps.adminApp.fetch(new Request(client.url, { method: client.method }));
    const body = client.method === "HEAD" ? "" : await response.text();
    client.answer({ status: response.status, headers: [...response.headers], body });
  }
}

/** Under the router's own prefix, as the app matches it (core/http/request-target.ts isAdminPath). */
function adminRequest(url: string): boolean {
  if (!url.includes("/_edgeslice") && !url.includes("%")) return false;
  const target = requestTarget(url);
  return target !== undefined && isAdminPath(target.path);
}
