/**
 * A read repeated on an interval, one at a time: the first once `after` settles (a store's first load, so
 * it finds what that load found), then every `intervalMs`; a refresh asked while one runs joins it.
 */
export class PeriodicRead {
  readonly #read: () => Promise<void>;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(read: () => Promise<void>, intervalMs: number) {
    this.#read = read;
    this.#intervalMs = intervalMs;
  }

  /** Reads now, or joins the read under way. */
  refresh(): Promise<void> {
    this.#running ??= this.#read().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  start(after?: Promise<unknown>): void {
    void Promise.resolve(after)
      .catch(() => undefined)
      .then(() => this.refresh());
    this.#timer = setInterval(() => void this.refresh(), this.#intervalMs);
    this.#timer.unref();
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
