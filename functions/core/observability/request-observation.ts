import type { ErrorAnswer, RouterError } from "../http/errors.js";
import { grpcErrorAnswer } from "../http/grpc-errors.js";
import { errorAnswerWithRequestId } from "../http/request-id.js";
import type { Backend, Selection } from "../selection/selection.js";
import type { AccessLogEntry } from "./access-log.js";
import type { RouterMetrics } from "./metrics.js";
import type { AttemptOutcome, RouteSeries, ServiceSeries } from "./request-metrics.js";
import type { RequestSpan } from "./tracing.js";

/**
 * One request as the metrics and the access log see it: created when the request arrives, told which route
 * matched, which backends were tried and when the response head went out, then (when sampled) turned into
 * an access log line at the end. Times are the runtime's monotonic clock in ms (performance.now()); this
 * file reads no clock itself.
 *
 * One small object per request is the whole cost: the series are resolved once per selection
 * (request-metrics.ts), so nothing here hashes labels or builds strings until a sampled line is written.
 */
/** The status logged for a request whose client went away before the response head (nginx's 499). */
export const CLIENT_CLOSED = 499;

export class RequestObservation {
  readonly requestId: string;
  readonly method: string;
  /** Arrival, ms on the monotonic clock. */
  readonly started: number;
  /** Whether the request is watched to its end: the access log writes it, or it has a span (decided on arrival). */
  readonly logged: boolean;
  /** The request's span when tracing is on (core/observability/tracing.ts). */
  readonly span: RequestSpan | undefined;
  readonly #accessLogged: boolean;
  /** The matched route's series; undefined while no route matched. */
  route: RouteSeries | undefined;
  /** The last backend an attempt went to. */
  backend: Backend | undefined;
  attempts = 0;
  /** The status sent (0 until the response head went out). */
  status = 0;
  /** Response body bytes sent (the Node proxy adds each chunk). */
  bytes = 0;
  /** False where the runtime cannot count body bytes (the web path streams the body after returning). */
  bytesCounted = true;
  /** Whether the answer sent is the last tried backend's (false: the router's own). */
  answered = false;
  /** When the response head went out, ms on the monotonic clock. */
  respondedAt = 0;
  /**
   * The request is a gRPC call (content-type application/grpc, core/http/grpc-errors.ts): the router's own answers
   * are gRPC errors, counted and logged by the HTTP status they stand for, so error rates read the same.
   */
  grpc = false;
  #lineTaken = false;
  #finished = false;

  constructor(requestId: string, method: string, started: number, logged: boolean, span?: RequestSpan) {
    this.requestId = requestId;
    this.method = method;
    this.started = started;
    this.logged = logged || span !== undefined;
    this.#accessLogged = logged;
    this.span = span;
  }

  /**
   * True the first time it is asked for a sampled request, false after and for any other: the one access
   * log line, whichever of the places that see a request end (an error answer, the response's close) comes
   * first.
   */
  takeLogLine(): boolean {
    if (!this.logged || this.#lineTaken) return false;
    this.#lineTaken = true;
    this.span?.end(this.status === 0 ? CLIENT_CLOSED : this.status, this.series()?.cluster ?? "");
    return this.#accessLogged;
  }

  /** A route matched: its series label the answer. */
  routed(metrics: RouterMetrics, selection: Selection): void {
    this.route = metrics.red.forSelection(selection);
    this.span?.routed(selection.route?.id, selection.route?.rule, selection.service);
  }

  /** The proxy policy sends an attempt to `backend`. */
  tried(backend: Backend): void {
    this.backend = backend;
    this.attempts++;
    this.span?.attempt(backend, this.attempts - 1);
  }

  /** The attempt on `backend` settled (core/forwarding/retry-loop.ts): for its span. */
  settled(outcome: AttemptOutcome): void {
    this.span?.attemptEnded(outcome, outcome === "ok" ? this.status : 0);
  }

  /**
   * The response head goes out now (the end point of edgeslice_request_duration_seconds): a backend's answer
   * when `answered`, else the router's own. Only the first call counts, so a path that reports the answer
   * where it sends it and again where it returns counts it once.
   */
  respond(metrics: RouterMetrics, status: number, now: number, answered: boolean): void {
    if (this.status !== 0) return;
    this.status = status;
    this.answered = answered;
    this.respondedAt = now;
    metrics.respond(this.series() ?? metrics.red.unrouted, this.method, status, (now - this.started) / 1000);
    this.route?.rule?.count(status);
  }

  /**
   * The client went away before any response head: recorded with code 499 in the RED series only (the
   * status classes count it where the transport notices, as `client_closed`).
   */
  clientClosed(metrics: RouterMetrics, now: number): void {
    if (this.status !== 0) return;
    this.status = CLIENT_CLOSED;
    this.respondedAt = now;
    (this.series() ?? metrics.red.unrouted).observe(this.method, CLIENT_CLOSED, (now - this.started) / 1000);
    this.route?.rule?.count(CLIENT_CLOSED);
  }

  /**
   * A proxied exchange ended at `now` (its response's last byte, or the client gone), having read
   * `requestBytes` of the client's body: its total time and bytes (edgeslice_request_total_seconds, the byte
   * counters). Once; the router's own answers are not exchanges.
   */
  finished(metrics: RouterMetrics, now: number, requestBytes: number): void {
    if (this.#finished) return;
    this.#finished = true;
    const series = this.series() ?? metrics.red.unrouted;
    series.finished((now - this.started) / 1000, requestBytes, this.bytesCounted ? this.bytes : 0);
  }

  /**
   * The router's own answer to `error`, counted: the 499 of a client gone before the head (nobody reads the
   * answer; no response of the router's) or the answer's status, with its body's bytes (ASCII only: error names
   * and valid request ids). The same on every path that answers for itself (app.ts, node/direct-requests.ts).
   */
  routerAnswer(metrics: RouterMetrics, error: RouterError, now: number): ErrorAnswer {
    const answer = errorAnswerWithRequestId(error, this.requestId);
    if (error === "client_closed") {
      metrics.requests.client_closed++;
      this.clientClosed(metrics, now);
    } else {
      this.respond(metrics, answer.status, now, false);
      this.bytes = this.grpc ? 0 : answer.body.length;
    }
    return this.grpc ? grpcErrorAnswer(error, this.requestId) : answer;
  }

  /** The series the answer is labelled with: the backend's cluster or the route's own; undefined: unrouted. */
  series(): ServiceSeries | undefined {
    if (this.route === undefined) return undefined;
    return this.answered && this.backend ? this.route.of(this.backend.cluster) : this.route.router;
  }

  /**
   * The access log entry once the response ended at `now`. `wallNow` (Date.now() at the same moment) dates
   * the arrival without a wall-clock read per request.
   */
  entry(
    now: number,
    wallNow: number,
    request: {
      readonly client: string | undefined;
      readonly host: string;
      readonly path: string;
      readonly protocol?: string | undefined;
    },
  ): AccessLogEntry {
    const series = this.series();
    return {
      time: wallNow - (now - this.started),
      requestId: this.requestId,
      client: request.client,
      method: this.method,
      host: request.host,
      path: request.path,
      protocol: request.protocol,
      // No head went out: the client left first (nginx's 499).
      status: this.status === 0 ? CLIENT_CLOSED : this.status,
      bytes: this.bytesCounted ? this.bytes : undefined,
      durationMs: now - this.started,
      backend: this.answered ? this.backend?.address : undefined,
      cluster: series?.cluster ?? "",
      service: series?.service ?? "",
      family: series?.family ?? "",
      attempts: this.attempts,
    };
  }
}
