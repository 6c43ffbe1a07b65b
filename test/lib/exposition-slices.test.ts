import { describe, expect, it } from "vitest";
import { expositionSlices, expositionStream } from "../../lib/exposition-slices.js";
import {
  CounterFamily,
  type MetricFamily,
  PAUSE,
  renderFamilies,
  type Sample,
} from "../../lib/prometheus.js";

function counterOf(children: number): CounterFamily {
  const family = new CounterFamily("hits_total", "Hits.", ["service"]);
  for (let i = 0; i < children; i++) family.child(`ns/service-${i}`).inc(i);
  return family;
}

/** A family whose samples are counted as the render takes them, and which notes when it was let go. */
function observedFamily(samples: number): {
  family: MetricFamily;
  taken: () => number;
  released: () => boolean;
} {
  let taken = 0;
  let released = false;
  function* produce(): Generator<Sample> {
    try {
      for (let i = 0; i < samples; i++) {
        taken++;
        yield { labels: { i: String(i) }, value: i };
      }
    } finally {
      released = true;
    }
  }
  return {
    family: { name: "g", type: "gauge", help: "h", samples: { [Symbol.iterator]: produce } },
    taken: () => taken,
    released: () => released,
  };
}

async function readAll(
  stream: ReadableStream<Uint8Array>,
  onChunk: () => void = () => {},
): Promise<string[]> {
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return chunks;
    onChunk();
    chunks.push(decoder.decode(value));
  }
}

const setImmediateTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("expositionSlices", () => {
  it("cuts the whole render into slices of at most the given number of lines, line for line", () => {
    const family = counterOf(250);
    const slices = [...expositionSlices([family.family()], 100)];

    expect(slices.join("")).toBe(renderFamilies([family.family()]));
    expect(slices.map((slice) => slice.split("\n").length - 1)).toEqual([100, 100, 52]);
  });

  it("counts a PAUSE toward a slice, so a family that works without output still ends slices", () => {
    const working: MetricFamily = {
      name: "sum",
      type: "gauge",
      help: "A sum over many rows.",
      samples: [PAUSE, PAUSE, PAUSE, PAUSE, PAUSE, { value: 5 }],
    };
    expect([...expositionSlices([working], 3)]).toEqual([
      "# HELP sum A sum over many rows.\n# TYPE sum gauge\n",
      "",
      "sum 5\n",
    ]);
  });
});

describe("expositionStream", () => {
  it("streams a large exposition in several slices while the event loop serves other work between them", async () => {
    const family = counterOf(2_000);
    let otherWork = 0;
    let ticking = true;
    const tick = () => {
      otherWork++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const workBeforeChunk: number[] = [];

    const chunks = await readAll(
      expositionStream([family.family()], { yieldToLoop: setImmediateTurn, unitsPerSlice: 100 }),
      () => workBeforeChunk.push(otherWork),
    );
    ticking = false;

    expect(chunks.join("")).toBe(renderFamilies([family.family()]));
    expect(chunks.length).toBeGreaterThan(10);
    for (let i = 1; i < workBeforeChunk.length; i++) {
      expect(workBeforeChunk[i]).toBeGreaterThan(workBeforeChunk[i - 1] as number);
    }
  });

  it("renders nothing before a read, one slice per read, and lets the samples go when the reader cancels", async () => {
    const observed = observedFamily(10_000);
    const stream = expositionStream([observed.family], { yieldToLoop: setImmediateTurn, unitsPerSlice: 100 });
    expect(observed.taken()).toBe(0);

    const reader = stream.getReader();
    await reader.read();
    await reader.read();
    expect(observed.taken()).toBeLessThanOrEqual(200);
    await reader.cancel();

    expect(observed.released()).toBe(true);
    expect(observed.taken()).toBeLessThan(10_000);
  });
});
