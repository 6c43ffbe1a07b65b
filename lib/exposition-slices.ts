import { expositionLines, type MetricFamily, PAUSE } from "./prometheus.js";

/**
 * A scrape rendered in slices, so a large exposition (a series per Service of a big store) never holds the event
 * loop of the process that serves it: each slice is a bounded number of lines (and PAUSEs), the families are
 * computed lazily as the slices reach them, and the stream waits for the event loop to serve other work before
 * each slice after the first. Nothing is rendered ahead of the reader, so a slow scraper holds one slice at most.
 */

/** Lines per slice: about 100 KB, rendered in well under a millisecond on average (bench/metrics/). */
export const LINES_PER_SLICE = 1_000;

/** Slices of the exposition, each of up to `unitsPerSlice` lines and PAUSEs; a slice of PAUSEs alone is "". */
export function* expositionSlices(
  families: Iterable<MetricFamily>,
  unitsPerSlice: number = LINES_PER_SLICE,
): Generator<string> {
  let lines: string[] = [];
  let units = 0;
  for (const line of expositionLines(families)) {
    if (line !== PAUSE) lines.push(line);
    if (++units < unitsPerSlice) continue;
    yield lines.length === 0 ? "" : `${lines.join("\n")}\n`;
    lines = [];
    units = 0;
  }
  if (lines.length > 0) yield `${lines.join("\n")}\n`;
}

export interface ExpositionStreamOptions {
  /** Resolves once the event loop has served other work (Node: setImmediate; elsewhere: a 0 ms timer). */
  readonly yieldToLoop: () => Promise<void>;
  readonly unitsPerSlice?: number;
}

/** The exposition as a byte stream of slices, one slice per read, with a turn of the event loop before each. */
export function expositionStream(
  families: Iterable<MetricFamily>,
  options: ExpositionStreamOptions,
): ReadableStream<Uint8Array> {
  const slices = expositionSlices(families, options.unitsPerSlice);
  const encoder = new TextEncoder();
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (started) await options.yieldToLoop();
          started = true;
          const next = slices.next();
          if (next.done) {
            controller.close();
            return;
          }
          if (next.value === "") continue;
          controller.enqueue(encoder.encode(next.value));
          return;
        }
      },
      cancel() {
        slices.return(undefined);
      },
    },
    // Nothing is rendered before a read asks for it.
    { highWaterMark: 0 },
  );
}

/** A turn of the event loop on any runtime with timers (Workers included). */
export function nextTimerTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
