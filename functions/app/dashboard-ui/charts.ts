import type { TrafficSeries, TrafficView } from "../../core/selection/traffic-history.js";
import { CHART_COLORS } from "./colors.js";
import { byId, el } from "./dom.js";

/**
 * The dashboard's charts: inline SVG drawn with DOM calls, no library: one line per series over the window the
 * router's ring of samples covers (core/selection/traffic-history.ts), the y axis from 0 to a round maximum.
 */

const SVG = "http://www.w3.org/2000/svg";
const COLORS = CHART_COLORS;
const W = 340;
const H = 150;
const LEFT = 46;
const RIGHT = 8;
const TOP = 8;
const BOTTOM = 20;

interface Line {
  readonly name: string;
  readonly color: string | undefined;
  readonly dashed: boolean;
  readonly points: readonly { readonly at: number; readonly value: number | null }[];
}

/** The x axis spans [from, to] (ms). */
interface Window {
  readonly from: number;
  readonly to: number;
}

function svg(tag: string, attrs: Readonly<Record<string, string | number | undefined>>): SVGElement {
  const element = document.createElementNS(SVG, tag) as SVGElement;
  for (const key of Object.keys(attrs)) element.setAttribute(key, String(attrs[key]));
  return element;
}

function roundUp(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

const fmtRate = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const fmtRatio = (v: number) => `${(100 * v).toFixed(v >= 0.1 ? 0 : 1)}%`;
const fmtSeconds = (v: number) =>
  v >= 1 ? `${v.toFixed(1)} s` : `${(1000 * v).toFixed(v >= 0.01 ? 0 : 1)} ms`;

/** The grid lines with their labels, and the window's ends under the x axis. */
function axes(
  box: SVGElement,
  format: (value: number) => string,
  max: number,
  window: Window,
  x: (at: number) => number,
): void {
  const y = (value: number) => TOP + (H - TOP - BOTTOM) * (1 - value / max);
  for (const share of [0, 0.5, 1]) {
    box.appendChild(
      svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(share * max), y2: y(share * max), stroke: "#e3e6eb" }),
    );
    const label = svg("text", {
      x: LEFT - 4,
      y: y(share * max) + 4,
      "text-anchor": "end",
      "font-size": 10,
      fill: "#56606e",
    });
    label.textContent = format(share * max);
    box.appendChild(label);
  }
  const minutes = (window.to - window.from) / 60000;
  const span = minutes >= 1 ? `${minutes.toFixed(minutes % 1 ? 1 : 0)} min` : `${Math.round(minutes * 60)} s`;
  const ends: [number, string][] = [
    [window.from, `-${span}`],
    [window.to, "now"],
  ];
  ends.forEach(([at, text], i) => {
    const label = svg("text", {
      x: x(at),
      y: H - 5,
      "text-anchor": i === 0 ? "start" : "end",
      "font-size": 10,
      fill: "#56606e",
    });
    label.textContent = text;
    box.appendChild(label);
  });
}

/** One line's path (a gap where a value is null), and a dot when it has one point; false when it has none. */
function drawLine(
  box: SVGElement,
  line: Line,
  x: (at: number) => number,
  y: (value: number) => number,
): boolean {
  let d = "";
  let pen = false;
  for (const point of line.points) {
    if (point.value === null) {
      pen = false;
      continue;
    }
    d += `${pen ? " L" : " M"}${x(point.at).toFixed(1)} ${y(point.value).toFixed(1)}`;
    pen = true;
  }
  if (!d) return false;
  const attrs: Record<string, string | number | undefined> = {
    d,
    fill: "none",
    stroke: line.color,
    "stroke-width": 1.8,
    "stroke-linejoin": "round",
  };
  if (line.dashed) attrs["stroke-dasharray"] = "4 3";
  box.appendChild(svg("path", attrs));
  const only = line.points.length === 1 ? line.points[0] : undefined;
  if (only && only.value !== null)
    box.appendChild(svg("circle", { cx: x(only.at), cy: y(only.value), r: 2.5, fill: line.color }));
  return true;
}

function chart(
  title: string,
  lines: readonly Line[],
  format: (value: number) => string,
  window: Window,
  id: string,
): HTMLElement {
  const box = el("figure", null, "chart");
  if (id) box.id = id;
  box.appendChild(el("figcaption", title));
  let max = 0;
  for (const line of lines)
    for (const point of line.points) if (point.value !== null && point.value > max) max = point.value;
  max = roundUp(max);
  const image = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
  image.appendChild(svg("title", {})).textContent = title;
  const { from, to } = window;
  const x = (at: number) => LEFT + (W - LEFT - RIGHT) * (to > from ? (at - from) / (to - from) : 1);
  const y = (value: number) => TOP + (H - TOP - BOTTOM) * (1 - value / max);
  axes(image, format, max, window, x);
  let drawn = 0;
  for (const line of lines) if (drawLine(image, line, x, y)) drawn++;
  box.appendChild(image);
  if (drawn === 0) box.appendChild(el("p", "no traffic in the window yet", "muted empty"));
  return box;
}

function legend(names: readonly string[], colorOf: (name: string) => number | undefined): HTMLElement {
  const p = el("p", null, "legend");
  for (const name of names) {
    const key = el("span", null, "key");
    key.appendChild(el("span", "\u25a0 ", `swatch-${colorOf(name)}`));
    key.appendChild(document.createTextNode(name));
    p.appendChild(key);
  }
  return p;
}

type PointField = "rate" | "serverErrorRatio" | "clientErrorRatio" | "p99" | "p50";

function renderGroup(id: string, series: readonly TrafficSeries[], window: Window): void {
  const box = byId(id);
  box.replaceChildren();
  const colorIndex: Record<string, number> = {};
  series.forEach((item, i) => {
    colorIndex[item.name] = i % COLORS.length;
  });
  const colorOf = (name: string) => colorIndex[name];
  const lines = (field: PointField, dashed: boolean): Line[] =>
    series.map((item) => ({
      name: item.name,
      color: COLORS[colorOf(item.name) ?? 0],
      dashed,
      points: item.points.map((point) => ({ at: point.at, value: point[field] })),
    }));
  if (series.length === 0) {
    box.appendChild(el("p", "no requests yet: the charts fill as the router samples its counters", "muted"));
    return;
  }
  box.appendChild(
    legend(
      series.map((item) => item.name),
      colorOf,
    ),
  );
  const grid = el("div", null, "charts");
  grid.appendChild(chart("Requests per second", lines("rate", false), fmtRate, window, `${id}-rate`));
  const errors = lines("serverErrorRatio", false).concat(lines("clientErrorRatio", true));
  grid.appendChild(chart("Error ratio: 5xx solid, 4xx dashed", errors, fmtRatio, window, `${id}-errors`));
  const latency = lines("p99", false).concat(lines("p50", true));
  grid.appendChild(chart("Latency: p99 solid, p50 dashed", latency, fmtSeconds, window, `${id}-latency`));
  box.appendChild(grid);
}

export function renderHistory(history: TrafficView | null): void {
  if (!history) {
    byId("history-note").textContent = "not available";
    return;
  }
  const ends: number[] = [];
  for (const series of history.services.concat(history.clusters))
    for (const point of series.points) ends.push(point.at);
  for (const retry of history.retries) ends.push(retry.at);
  const to = ends.length ? Math.max(...ends) : Date.now();
  // Until the ring is full the x axis spans what it holds, so a young router's lines are not squeezed right.
  const first = ends.length ? Math.min(...ends) - history.intervalMs : to - history.intervalMs;
  const window = { from: Math.max(to - history.intervalMs * 60, first), to };
  byId("history-note").textContent =
    `one point per ${history.intervalMs / 1000} s, sampled by the router; up to the last ${(history.intervalMs * 60) / 60000} min`;
  renderGroup("by-service", history.services, window);
  renderGroup("by-cluster", history.clusters, window);
  const retries = el("div", null, "charts");
  byId("retries").replaceChildren(retries);
  const line: Line = {
    name: "retries",
    color: COLORS[1],
    dashed: false,
    points: history.retries.map((retry) => ({ at: retry.at, value: retry.perSecond })),
  };
  retries.appendChild(
    chart("Retries per second (attempts on another backend)", [line], fmtRate, window, "retries-chart"),
  );
}
