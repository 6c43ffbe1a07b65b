import { ClusterHealth, type HealthState, type HealthView } from "./cluster-health.js";
import { decayedAverage } from "./ewma.js";
import type { SteeringSettings } from "./settings.js";

/**
 * What this router (Node: the process; Workers: the isolate) has observed of one cluster through the attempts
 * steered to it: its health (cluster-health.ts) and the EWMA of its time to response head (ewma.ts). The
 * retry loop and the proxy policy feed it; steering reads it. `now` is the runtime's clock, injected.
 */
export class ClusterTrack {
  readonly name: string;
  readonly now: () => number;
  readonly #health: ClusterHealth;
  readonly #decayMs: number;
  #ewmaMs: number | undefined;
  #sampledAt = 0;
  #samples = 0;

  constructor(name: string, now: () => number, settings: SteeringSettings) {
    this.name = name;
    this.now = now;
    this.#health = new ClusterHealth(settings.health);
    this.#decayMs = settings.decayMs;
  }

  /** A response head came back after `elapsedMs`. */
  latency(elapsedMs: number): void {
    const at = this.now();
    this.#samples++;
    this.#ewmaMs = decayedAverage(
      this.#ewmaMs,
      elapsedMs,
      at - this.#sampledAt,
      this.#decayMs,
      this.#samples,
    );
    this.#sampledAt = at;
  }

  /** A backend of the cluster answered; a 5xx counts as the cluster's failure. True when it stepped it over. */
  answered(status: number): boolean {
    return this.#health.record(this.now(), status >= 500);
  }

  /** An attempt failed without an answer (connect error, timeout, reset). True when it stepped it over. */
  failed(): boolean {
    return this.#health.record(this.now(), true);
  }

  state(now: number): HealthState {
    return this.#health.state(now);
  }

  health(now: number): HealthView {
    return this.#health.view(now);
  }

  /** undefined until the first answer. */
  get ewmaMs(): number | undefined {
    return this.#ewmaMs;
  }

  get samples(): number {
    return this.#samples;
  }
}

/** Every cluster's track, created on first use; at most `maxTracked` (the least recently created goes first). */
export class SteeringState {
  readonly settings: SteeringSettings;
  readonly now: () => number;
  readonly #tracks = new Map<string, ClusterTrack>();

  constructor(now: () => number, settings: SteeringSettings) {
    this.now = now;
    this.settings = settings;
  }

  track(cluster: string): ClusterTrack {
    let track = this.#tracks.get(cluster);
    if (!track) {
      if (this.#tracks.size >= this.settings.maxTracked) {
        const oldest = this.#tracks.keys().next();
        if (!oldest.done) this.#tracks.delete(oldest.value);
      }
      track = new ClusterTrack(cluster, this.now, this.settings);
      this.#tracks.set(cluster, track);
    }
    return track;
  }

  /** The clusters tracked so far, by name. */
  tracks(): ClusterTrack[] {
    return [...this.#tracks.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
