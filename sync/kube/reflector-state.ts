/**
 * Where one reflector stands: the resourceVersion its next watch resumes from, whether it synced, settled (the
 * sync need not wait for it any longer) or found its optional kind missing, and what health reports of it.
 * Each method is one transition of its list+watch loop (reflector.ts).
 */
export class ReflectorState {
  /** Where the next watch resumes: the resourceVersion of the last list, event or bookmark. */
  resourceVersion = "";
  readonly whenSynced: Promise<void>;
  readonly whenSettled: Promise<void>;
  #synced = false;
  #settled = false;
  #missing = false;
  #lastEventAt: number | null = null;
  #restarts = 0;
  /** Since when an optional kind's list has answered 404 (reset by a list that succeeds). */
  #notFoundSince: number | undefined;
  #resolveSynced: () => void = () => {};
  #resolveSettled: () => void = () => {};

  constructor() {
    this.whenSynced = new Promise<void>((resolve) => {
      this.#resolveSynced = resolve;
    });
    this.whenSettled = new Promise<void>((resolve) => {
      this.#resolveSettled = resolve;
    });
  }

  get synced(): boolean {
    return this.#synced;
  }

  get settled(): boolean {
    return this.#settled;
  }

  get missing(): boolean {
    return this.#missing;
  }

  get lastEventAt(): number | null {
    return this.#lastEventAt;
  }

  get restarts(): number {
    return this.#restarts;
  }

  /** An object or bookmark arrived at `at`; a resourceVersion it carries is where the next watch resumes. */
  delivered(resourceVersion: unknown, at: number): void {
    this.#lastEventAt = at;
    if (typeof resourceVersion === "string" && resourceVersion !== "") this.resourceVersion = resourceVersion;
  }

  /**
   * A list completed: the next watch resumes from its resourceVersion. True when the kind counts as served
   * anew: its first list, or the first after it went missing.
   */
  listed(resourceVersion: string, at: number): boolean {
    this.resourceVersion = resourceVersion;
    this.#lastEventAt = at;
    this.#notFoundSince = undefined;
    const servedAnew = this.#missing || !this.#synced;
    this.#missing = false;
    return servedAnew;
  }

  /** The first list is in the cache; true only the first time. Settles too. */
  markSynced(): boolean {
    if (this.#synced) return false;
    this.#synced = true;
    this.#resolveSynced();
    this.settle();
    return true;
  }

  /** The sync may go on without this reflector; idempotent. */
  settle(): void {
    this.#settled = true;
    this.#resolveSettled();
  }

  /** An optional kind is not served (or refused by design); true when it was not missing already. */
  markMissing(): boolean {
    if (this.#missing) return false;
    this.#missing = true;
    return true;
  }

  /** A watch restarted for a failure, a stall or an expired resourceVersion. */
  restarted(): void {
    this.#restarts++;
  }

  /** A list answered 404 at `at`: since when its lists have answered 404. */
  notFoundSince(at: number): number {
    this.#notFoundSince ??= at;
    return this.#notFoundSince;
  }
}
