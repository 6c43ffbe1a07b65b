import { readFile } from "node:fs/promises";
import { fixed, formatTable } from "../support/table.js";

/** The parts of a V8 `.cpuprofile` (written by `node --cpu-prof`) used for a self-time summary. */
interface CpuProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly CpuProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTimeEntry {
  readonly name: string;
  readonly location: string;
  readonly share: number;
  /** For native frames: the JavaScript function that called it most (by self time), to say who pays. */
  readonly calledFrom: string | undefined;
}

export interface ProfileSummary {
  /** Top functions by self time (share of all non-idle samples). */
  readonly top: readonly SelfTimeEntry[];
  /** Self time grouped by where the code lives (edgeslice, hono, undici, node internals, GC, ...). */
  readonly byArea: readonly { area: string; share: number }[];
  readonly idleShare: number;
}

export async function summariseCpuProfile(path: string, topCount = 15): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(path, "utf8")) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  /** The nearest ancestor frame with a script URL: who called into native code. */
  const jsCaller = (id: number): string | undefined => {
    let current = parents.get(id);
    for (let depth = 0; current !== undefined && depth < 50; depth++) {
      const frame = nodes.get(current)?.callFrame;
      if (frame && frame.url !== "")
        return `${frame.functionName || "(anonymous)"} ${shortLocation(frame.url, frame.lineNumber)}`;
      current = parents.get(current);
    }
    return undefined;
  };
  const selfMicros = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    const delta = profile.timeDeltas[i] ?? 0;
    if (id !== undefined) selfMicros.set(id, (selfMicros.get(id) ?? 0) + Math.max(0, delta));
  }
  let idle = 0;
  let busy = 0;
  const byFunction = new Map<
    string,
    { name: string; location: string; micros: number; callers: Map<string, number> }
  >();
  const byArea = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === "(idle)") {
      idle += micros;
      continue;
    }
    // The profiler's own stop (router-probe.mjs asks node:inspector for the profile) is not the router's work.
    if (frame.url === "" && jsCaller(id)?.startsWith("post node:inspector")) continue;
    busy += micros;
    const location = shortLocation(frame.url, frame.lineNumber);
    const key = `${frame.functionName}@${location}`;
    const entry = byFunction.get(key) ?? {
      name: frame.functionName || "(anonymous)",
      location,
      micros: 0,
      callers: new Map<string, number>(),
    };
    entry.micros += micros;
    if (frame.url === "") {
      const caller = jsCaller(id) ?? "(none)";
      entry.callers.set(caller, (entry.callers.get(caller) ?? 0) + micros);
    }
    byFunction.set(key, entry);
    const area = areaOf(frame.functionName, frame.url);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
  }
  const total = busy || 1;
  return {
    top: [...byFunction.values()]
      .sort((a, b) => b.micros - a.micros)
      .slice(0, topCount)
      .map((entry) => ({
        name: entry.name,
        location: entry.location,
        share: entry.micros / total,
        calledFrom: [...entry.callers.entries()].sort((a, b) => b[1] - a[1])[0]?.[0],
      })),
    byArea: [...byArea.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([area, micros]) => ({ area, share: micros / total })),
    idleShare: idle / (idle + busy || 1),
  };
}

function shortLocation(url: string, line: number): string {
  if (url === "") return "(native)";
  const trimmed = url.replace(/^file:\/\//, "");
  const inModules = trimmed.lastIndexOf("node_modules/");
  const short =
    inModules >= 0 ? trimmed.slice(inModules + "node_modules/".length) : trimmed.replace(process.cwd(), ".");
  return `${short}:${line + 1}`;
}

function areaOf(functionName: string, url: string): string {
  if (functionName === "(garbage collector)") return "garbage collector";
  if (functionName === "(program)") return "V8/native (program)";
  if (url === "") return "native / builtins";
  if (url.startsWith("node:internal/deps/undici"))
    return "node's bundled undici (web Request/Response/Headers)";
  if (url.startsWith("node:internal/")) return `node internal/${url.slice(14).split("/")[0] ?? ""}`;
  if (url.startsWith("node:")) return `node ${url.slice(5).split("/")[0] ?? ""}`.trim();
  const match = /node_modules\/(@[^/]+\/[^/]+|[^/]+)/.exec(url);
  if (match?.[1]) return match[1];
  if (url.includes("/dist/router")) return "edgeslice (dist/router bundle)";
  if (url.includes("/functions/")) return "edgeslice functions/";
  if (url.includes("/store/")) return "edgeslice store/";
  if (url.includes("/lib/")) return "edgeslice lib/";
  return "other";
}

/** A summary as the bench prints it: `title`, then self time by area and the top functions. */
export function formatProfileSummary(title: string, summary: ProfileSummary): string[] {
  return [
    "",
    `${title}; idle ${(summary.idleShare * 100).toFixed(1)}% of samples; shares of busy time):`,
    formatTable(
      ["area", "self %"],
      summary.byArea.slice(0, 10).map((a) => [a.area, fixed(a.share * 100, 1)]),
    ),
    "",
    formatTable(
      ["function", "self %", "where", "native frame called from"],
      summary.top.map((entry) => [
        entry.name,
        fixed(entry.share * 100, 1),
        entry.location,
        entry.calledFrom ?? "",
      ]),
    ),
  ];
}
