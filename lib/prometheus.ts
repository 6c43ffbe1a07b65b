/**
 * The Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): one renderer for every process. Metric
 * families are plain data, so each side keeps its numbers however suits its hot path and renders on scrape.
 *
 * For labelled series on a hot path, CounterFamily and HistogramFamily hand out children: a child is
 * resolved once from its label values (the only place a key string is built) and then recorded into with
 * plain field arithmetic, no label object, hash or string per observation.
 */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type MetricType = "counter" | "gauge" | "histogram";
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels?: Labels | undefined;
  /** Already rendered label text (`{a="1"}`), used instead of `labels` (children render theirs once). */
  readonly labelText?: string;
  readonly value: number;
  /** Appended to the family name: `_bucket`, `_sum` and `_count` of a histogram. */
  readonly suffix?: string;
}

/**
 * Yielded among a family's samples by a producer that works between samples (summing a store's endpoints, say):
 * it renders nothing and counts as one unit of work, so a render in slices (exposition-slices.ts) can pause there.
 */
export const PAUSE: unique symbol = Symbol("pause");

export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  /** Read once per render; a lazy iterable is computed as the render reaches it. */
  readonly samples: Iterable<Sample | typeof PAUSE>;
}

/** The exposition line by line (without line ends), each PAUSE passed through where its family yielded it. */
export function* expositionLines(families: Iterable<MetricFamily>): Generator<string | typeof PAUSE> {
  for (const family of families) {
    yield `# HELP ${family.name} ${escapeHelp(family.help)}`;
    yield `# TYPE ${family.name} ${family.type}`;
    for (const sample of family.samples) {
      if (sample === PAUSE) {
        yield PAUSE;
        continue;
      }
      const labels = sample.labelText ?? labelText(sample.labels);
      yield `${family.name}${sample.suffix ?? ""}${labels} ${formatValue(sample.value)}`;
    }
  }
}

/** The whole exposition at once: for small registries (the sync's); a router's scrape renders in slices. */
export function renderFamilies(families: Iterable<MetricFamily>): string {
  const lines: string[] = [];
  for (const line of expositionLines(families)) if (line !== PAUSE) lines.push(line);
  return `${lines.join("\n")}\n`;
}

/** `{a="1",b="2"}`, or "" without labels; values escaped as the format requires (backslash, quote, newline). */
export function labelText(labels: Labels | undefined): string {
  if (!labels) return "";
  const pairs = labelPairs(labels);
  return pairs === "" ? "" : `{${pairs}}`;
}

/** `a="1",b="2"` without braces (a histogram appends its `le` pair). */
function labelPairs(labels: Labels): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}="${escapeLabelValue(value)}"`)
    .join(",");
}

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

/** One labelled series of a counter (or a gauge set by its owner): add to `value` directly. */
export class CounterChild {
  value = 0;
  readonly labels: Labels;
  readonly labelText: string;

  constructor(labels: Labels) {
    this.labels = labels;
    this.labelText = labelText(labels);
  }

  inc(by = 1): void {
    this.value += by;
  }
}

/**
 * One labelled series of a histogram. `counts[i]` holds the observations that fell into bucket i alone
 * (not cumulative: one increment per observation); the last slot is +Inf. Rendering accumulates.
 */
export class HistogramChild {
  readonly labels: Labels;
  readonly bounds: Float64Array;
  readonly counts: Float64Array;
  sum = 0;
  readonly #pairs: string;

  constructor(labels: Labels, bounds: Float64Array) {
    this.labels = labels;
    this.bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
    this.#pairs = labelPairs(labels);
  }

  /** Buckets are upper-inclusive (`le`): a value equal to a bound counts in that bound's bucket. */
  observe(value: number): void {
    const bounds = this.bounds;
    const n = bounds.length;
    let i = 0;
    while (i < n && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
  }

  /** Observations so far (the `_count` sample). */
  count(): number {
    let total = 0;
    for (const count of this.counts) total += count;
    return total;
  }

  samples(into: Sample[]): void {
    const prefix = this.#pairs === "" ? "{" : `{${this.#pairs},`;
    let cumulative = 0;
    for (let i = 0; i < this.counts.length; i++) {
      cumulative += this.counts[i] as number;
      const le = i < this.bounds.length ? formatValue(this.bounds[i] as number) : "+Inf";
      into.push({ suffix: "_bucket", labelText: `${prefix}le="${le}"}`, value: cumulative });
    }
    const own = this.#pairs === "" ? "" : `{${this.#pairs}}`;
    into.push({ suffix: "_sum", labelText: own, value: this.sum });
    into.push({ suffix: "_count", labelText: own, value: cumulative });
  }
}

/** Children by label values: keys are built when a child is resolved, never when it is recorded into. */
abstract class LabelledFamily<Child> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly #children = new Map<string, Child>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  /** The child for these label values (in `labelNames` order), created on first use. */
  child(...values: string[]): Child {
    if (values.length !== this.labelNames.length) {
      throw new Error(`${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
    }
    // U+0000 cannot occur in a label value that came from the store's validated names.
    const key = values.join("\u0000");
    let child = this.#children.get(key);
    if (!child) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i] as string;
      });
      child = this.create(labels);
      this.#children.set(key, child);
    }
    return child;
  }

  children(): IterableIterator<Child> {
    return this.#children.values();
  }

  protected abstract create(labels: Labels): Child;
}

export class CounterFamily extends LabelledFamily<CounterChild> {
  readonly type: "counter" | "gauge";

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    type: "counter" | "gauge" = "counter",
  ) {
    super(name, help, labelNames);
    this.type = type;
  }

  protected create(labels: Labels): CounterChild {
    return new CounterChild(labels);
  }

  family(): MetricFamily {
    return { name: this.name, type: this.type, help: this.help, samples: lazily(() => this.#samples()) };
  }

  *#samples(): Generator<Sample> {
    for (const child of this.children()) yield { labelText: child.labelText, value: child.value };
  }
}

export class HistogramFamily extends LabelledFamily<HistogramChild> {
  readonly bounds: Float64Array;

  /** `buckets`: strictly increasing finite upper bounds; +Inf is implied. */
  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, labelNames);
    if (labelNames.includes("le")) throw new Error(`${name}: "le" is the bucket label`);
    buckets.forEach((bound, i) => {
      if (!Number.isFinite(bound) || (i > 0 && bound <= (buckets[i - 1] as number))) {
        throw new Error(`${name}: buckets must be finite and strictly increasing`);
      }
    });
    this.bounds = Float64Array.from(buckets);
  }

  protected create(labels: Labels): HistogramChild {
    return new HistogramChild(labels, this.bounds);
  }

  family(): MetricFamily {
    return { name: this.name, type: "histogram", help: this.help, samples: lazily(() => this.#samples()) };
  }

  /** A child's samples are taken together, so its buckets, sum and count agree even if a render pauses among them. */
  *#samples(): Generator<Sample> {
    for (const child of this.children()) {
      const group: Sample[] = [];
      child.samples(group);
      yield* group;
    }
  }
}

/** An iterable that starts `iterate` afresh each time it is read. */
function lazily<T>(iterate: () => Iterator<T>): Iterable<T> {
  return { [Symbol.iterator]: iterate };
}
