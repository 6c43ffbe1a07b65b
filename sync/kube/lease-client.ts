import { ApiStatusError, failureKind } from "./api-errors.js";
import type { KubeApi, KubeResponse } from "./kube-api.js";
import { claimedLease, type LeaseClaim, type LeaseObject, releasedLease } from "./lease-record.js";
import type { Reachability } from "./reachability.js";

/**
 * The requests of a leader election on its one coordination.k8s.io/v1 Lease: read it, create or claim it,
 * release it. Every write is a PUT carrying the resourceVersion that was read (optimistic concurrency): a 409
 * Conflict means another replica wrote first. Each request tells `reachability` whether it got an answer.
 */
export class LeaseClient {
  readonly #api: KubeApi;
  readonly #claim: LeaseClaim;
  readonly #requestTimeoutMs: number;
  readonly #reachability: Reachability | undefined;
  readonly #collection: string;
  readonly #path: string;

  constructor(api: KubeApi, claim: LeaseClaim, requestTimeoutMs: number, reachability?: Reachability) {
    this.#api = api;
    this.#claim = claim;
    this.#requestTimeoutMs = requestTimeoutMs;
    this.#reachability = reachability;
    this.#collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(claim.namespace)}/leases`;
    this.#path = `${this.#collection}/${encodeURIComponent(claim.name)}`;
  }

  /** The Lease, undefined when there is none. */
  async read(): Promise<LeaseObject | undefined> {
    const read = await this.#request("GET", this.#path, [200, 404]);
    return read.status === 404 ? undefined : (read.body as LeaseObject);
  }

  /** Creates the Lease held by this replica, or claims `current`; false when another replica wrote first. */
  async claim(current: LeaseObject | undefined, atMs: number): Promise<boolean> {
    const lease = claimedLease(current, this.#claim, atMs);
    const written = current
      ? await this.#request("PUT", this.#path, [200, 409], lease)
      : await this.#request("POST", this.#collection, [200, 201, 409], lease);
    return written.status !== 409;
  }

  /** Hands the Lease back if this replica holds it, so a peer takes over at once. */
  async release(now: () => number): Promise<void> {
    const current = await this.read();
    if (current?.spec?.holderIdentity !== this.#claim.identity) return;
    await this.#request("PUT", this.#path, [200], releasedLease(current, now()));
  }

  /** One request; throws ApiStatusError for a status outside `accept`, and tells reachability. */
  async #request(
    method: "GET" | "PUT" | "POST",
    at: string,
    accept: number[],
    body?: unknown,
  ): Promise<KubeResponse> {
    try {
      const response = await this.#api.call(method, at, { body, timeoutMs: this.#requestTimeoutMs });
      if (!accept.includes(response.status)) {
        throw new ApiStatusError(response.status, response.body, response.retryAfterSeconds);
      }
      this.#reachability?.reached();
      return response;
    } catch (error) {
      if (failureKind(error) === "unreachable") this.#reachability?.failed(error);
      else this.#reachability?.reached();
      throw error;
    }
  }
}
