import { createHash } from "node:crypto";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { ApiStatusError } from "./api-errors.js";

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface KubeResponse {
  readonly status: number;
  /** The parsed JSON body (a metav1.Status on most errors), undefined when it was not JSON. */
  readonly body: unknown;
  /** Retry-After in seconds, when the server sent one (429, 503). */
  readonly retryAfterSeconds: number | undefined;
}

export interface KubeApi {
  /** One request with a JSON body in and out; rejects on a network error or after `timeoutMs`. */
  call(
    method: "GET" | "PUT" | "POST",
    path: string,
    options?: { query?: Query; body?: unknown; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<KubeResponse>;
  /**
   * A streamed GET (a watch): resolves the open response once a 200 arrived; rejects with ApiStatusError for
   * any other status, or a network error. Aborting `signal` destroys the stream.
   */
  stream(path: string, query: Query, signal: AbortSignal): Promise<IncomingMessage>;
}

/**
 * The sync's only HTTP client of the Kubernetes API: plain node:http(s) requests carrying what the KubeConfig
 * says (bearer or exec token, client certificate, CA, proxy), applied for every request so a rotated
 * service-account token is picked up. One keep-alive agent is reused while the TLS material stays the same.
 * Raw JSON in and out: no generated models, no second copy of what is listed.
 *
 * @example
 * const api = createKubeApi(kubeConfig);
 * const { status, body } = await api.call("GET", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x");
 */
export function createKubeApi(kubeConfig: KubeConfig): KubeApi {
  return new KubeHttpClient(kubeConfig);
}

/** A request ready to send: where, with which headers, over which agent and module (http or https). */
interface PreparedRequest {
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly agent: RequestOptions["agent"];
  readonly send: typeof httpsRequest;
}

/**
 * The HTTP client (see createKubeApi). Its one piece of state is the keep-alive agent and the fingerprint of
 * the TLS material it was made for: a request whose material differs (a rotated client certificate) gets a
 * new agent and the old one is destroyed.
 */
export class KubeHttpClient implements KubeApi {
  readonly #kubeConfig: KubeConfig;
  #cached: { fingerprint: string; agent: HttpAgent } | undefined;

  constructor(kubeConfig: KubeConfig) {
    this.#kubeConfig = kubeConfig;
  }

  async call(
    method: "GET" | "PUT" | "POST",
    path: string,
    options: { query?: Query; body?: unknown; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<KubeResponse> {
    const { url, headers, agent, send } = await this.#prepare(path, options.query);
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload !== undefined) headers["content-type"] = "application/json";
    return new Promise<KubeResponse>((resolve, reject) => {
      const outgoing = send(url, { method, headers, agent, signal: options.signal }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: parseJson(Buffer.concat(chunks).toString("utf8")),
            retryAfterSeconds: retryAfter(response),
          }),
        );
      });
      const timeoutMs = options.timeoutMs ?? 30_000;
      outgoing.setTimeout(timeoutMs, () =>
        outgoing.destroy(
          Object.assign(new Error(`request timed out after ${timeoutMs} ms`), { code: "ETIMEDOUT" }),
        ),
      );
      outgoing.on("error", reject);
      outgoing.end(payload);
    });
  }

  async stream(path: string, query: Query, signal: AbortSignal): Promise<IncomingMessage> {
    const { url, headers, agent, send } = await this.#prepare(path, query);
    return new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send(url, { method: "GET", headers, agent, signal }, (response) => {
        if (response.statusCode === 200) return resolve(response);
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () =>
          reject(
            new ApiStatusError(
              response.statusCode ?? 0,
              parseJson(Buffer.concat(chunks).toString("utf8")),
              retryAfter(response),
            ),
          ),
        );
      });
      outgoing.on("error", reject);
      outgoing.end();
    });
  }

  /** What the KubeConfig says now (server, credentials, TLS, proxy), applied to one request. */
  async #prepare(path: string, query: Query | undefined): Promise<PreparedRequest> {
    const cluster = this.#kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig has no current cluster");
    const applied: RequestOptions = {};
    await this.#kubeConfig.applyToHTTPSOptions(applied);
    const url = new URL(`${cluster.server.replace(/\/+$/, "")}${path}`);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    // Through a proxy the KubeConfig's own agent carries the request.
    const agent = cluster.proxyUrl ? applied.agent : this.#agentFor(url, applied);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return { url, headers: headersOf(applied), agent, send };
  }

  /** The keep-alive agent for this TLS material: the cached one, or a new one replacing it. */
  #agentFor(url: URL, applied: RequestOptions): HttpAgent {
    const fingerprint = tlsFingerprint(url.protocol, applied);
    if (this.#cached?.fingerprint !== fingerprint) {
      this.#cached?.agent.destroy();
      const tls = {
        keepAlive: true,
        ca: applied.ca,
        cert: applied.cert,
        key: applied.key,
        servername: applied.servername,
        ...(applied.rejectUnauthorized === undefined
          ? {}
          : { rejectUnauthorized: applied.rejectUnauthorized }),
      };
      this.#cached = {
        fingerprint,
        agent: url.protocol === "https:" ? new HttpsAgent(tls) : new HttpAgent(tls),
      };
    }
    return this.#cached.agent;
  }
}

/** The request headers the KubeConfig applied (a bearer token among them), and basic auth if it says so. */
function headersOf(applied: RequestOptions): Record<string, string> {
  const headers: Record<string, string> = { accept: "application/json" };
  for (const [name, value] of Object.entries(applied.headers ?? {})) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  if (applied.auth) headers.authorization = `Basic ${Buffer.from(applied.auth).toString("base64")}`;
  return headers;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function retryAfter(response: IncomingMessage): number | undefined {
  const value = Number(response.headers["retry-after"]);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

function tlsFingerprint(protocol: string, options: RequestOptions): string {
  const hash = createHash("sha256").update(protocol);
  for (const part of [
    options.ca,
    options.cert,
    options.key,
    options.servername,
    options.rejectUnauthorized,
  ]) {
    hash.update(
      `|${part === undefined ? "" : Buffer.isBuffer(part) ? part.toString("base64") : String(part)}`,
    );
  }
  return hash.digest("hex");
}
