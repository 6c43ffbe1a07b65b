/**
 * The dashboard's charts, part of its one inline script (dashboard-script.ts puts it inside its closure, so
 * these functions see `$` and `el`). Inline SVG drawn with DOM calls, no library: one line per series over the
 * window the router's ring of samples covers (core/traffic-history.ts), the y axis from 0 to a round maximum.
 */
export const DASHBOARD_CHARTS = `
  var SVG = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f"];
  var W = 340, H = 150, LEFT = 46, RIGHT = 8, TOP = 8, BOTTOM = 20;

  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }
  function roundUp(v) {
    if (!(v > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) if (v <= steps[i] * p) return steps[i] * p;
    return 10 * p;
  }
  function fmtRate(v) { return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2); }
  function fmtRatio(v) { return (100 * v).toFixed(v >= 0.1 ? 0 : 1) + "%"; }
  function fmtSeconds(v) { return v >= 1 ? v.toFixed(1) + " s" : (1000 * v).toFixed(v >= 0.01 ? 0 : 1) + " ms"; }

  // lines: [{ name, color, dashed, points: [{ at, value }] }]; the x axis spans [from, to] (ms).
  function chart(title, lines, format, from, to, id) {
    var box = el("figure", null, "chart");
    if (id) box.id = id;
    box.appendChild(el("figcaption", title));
    var max = 0;
    lines.forEach(function (l) { l.points.forEach(function (p) { if (p.value !== null && p.value > max) max = p.value; }); });
    max = roundUp(max);
    var s = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img" });
    s.appendChild(svg("title", {})).textContent = title;
    var x = function (at) { return LEFT + (W - LEFT - RIGHT) * (to > from ? (at - from) / (to - from) : 1); };
    var y = function (v) { return TOP + (H - TOP - BOTTOM) * (1 - v / max); };
    [0, 0.5, 1].forEach(function (f) {
      s.appendChild(svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(f * max), y2: y(f * max), stroke: "#e3e6eb" }));
      var label = svg("text", { x: LEFT - 4, y: y(f * max) + 4, "text-anchor": "end", "font-size": 10, fill: "#56606e" });
      label.textContent = format(f * max);
      s.appendChild(label);
    });
    var minutes = (to - from) / 60000;
    [[from, "-" + (minutes >= 1 ? minutes.toFixed(minutes % 1 ? 1 : 0) + " min" : Math.round(minutes * 60) + " s")], [to, "now"]].forEach(function (t, i) {
      var label = svg("text", { x: x(t[0]), y: H - 5, "text-anchor": i === 0 ? "start" : "end", "font-size": 10, fill: "#56606e" });
      label.textContent = t[1];
      s.appendChild(label);
    });
    var drawn = 0;
    lines.forEach(function (l) {
      var d = "";
      var pen = false;
      l.points.forEach(function (p) {
        if (p.value === null) { pen = false; return; }
        d += (pen ? " L" : " M") + x(p.at).toFixed(1) + " " + y(p.value).toFixed(1);
        pen = true;
      });
      if (!d) return;
      drawn++;
      var attrs = { d: d, fill: "none", stroke: l.color, "stroke-width": 1.8, "stroke-linejoin": "round" };
      if (l.dashed) attrs["stroke-dasharray"] = "4 3";
      s.appendChild(svg("path", attrs));
      if (l.points.length === 1 && l.points[0].value !== null) {
        s.appendChild(svg("circle", { cx: x(l.points[0].at), cy: y(l.points[0].value), r: 2.5, fill: l.color }));
      }
    });
    box.appendChild(s);
    if (drawn === 0) box.appendChild(el("p", "no traffic in the window yet", "muted empty"));
    return box;
  }

  function legend(names, colorOf) {
    var p = el("p", null, "legend");
    names.forEach(function (name) {
      var key = el("span", null, "key");
      key.appendChild(el("span", "\\u25a0 ", "swatch-" + colorOf(name)));
      key.appendChild(document.createTextNode(name));
      p.appendChild(key);
    });
    return p;
  }

  function renderGroup(id, series, from, to) {
    var box = $(id);
    box.replaceChildren();
    var colorIndex = {};
    series.forEach(function (s, i) { colorIndex[s.name] = i % COLORS.length; });
    var colorOf = function (name) { return colorIndex[name]; };
    var lines = function (field, dashed) {
      return series.map(function (s) {
        return {
          name: s.name, color: COLORS[colorOf(s.name)], dashed: dashed,
          points: s.points.map(function (p) { return { at: p.at, value: p[field] }; })
        };
      });
    };
    if (series.length === 0) { box.appendChild(el("p", "no requests yet: the charts fill as the router samples its counters", "muted")); return; }
    box.appendChild(legend(series.map(function (s) { return s.name; }), colorOf));
    var grid = el("div", null, "charts");
    grid.appendChild(chart("Requests per second", lines("rate", false), fmtRate, from, to, id + "-rate"));
    grid.appendChild(chart("Error ratio: 5xx solid, 4xx dashed", lines("serverErrorRatio", false).concat(lines("clientErrorRatio", true)), fmtRatio, from, to, id + "-errors"));
    grid.appendChild(chart("Latency: p99 solid, p50 dashed", lines("p99", false).concat(lines("p50", true)), fmtSeconds, from, to, id + "-latency"));
    box.appendChild(grid);
  }

  function renderHistory(history) {
    if (!history) { $("history-note").textContent = "not available"; return; }
    var ends = [];
    history.services.concat(history.clusters).forEach(function (s) { s.points.forEach(function (p) { ends.push(p.at); }); });
    history.retries.forEach(function (r) { ends.push(r.at); });
    var to = ends.length ? Math.max.apply(null, ends) : Date.now();
    // Until the ring is full the x axis spans what it holds, so a young router's lines are not squeezed right.
    var first = ends.length ? Math.min.apply(null, ends) - history.intervalMs : to - history.intervalMs;
    var from = Math.max(to - history.intervalMs * 60, first);
    $("history-note").textContent = "one point per " + (history.intervalMs / 1000) + " s, sampled by the router; up to the last " + (history.intervalMs * 60 / 60000) + " min";
    renderGroup("by-service", history.services, from, to);
    renderGroup("by-cluster", history.clusters, from, to);
    var retries = el("div", null, "charts");
    $("retries").replaceChildren(retries);
    retries.appendChild(chart("Retries per second (attempts on another backend)", [{
      name: "retries", color: COLORS[1], dashed: false,
      points: history.retries.map(function (r) { return { at: r.at, value: r.perSecond }; })
    }], fmtRate, from, to, "retries-chart"));
  }
`;

/** The swatch colours of the legend, as classes: the page's CSP allows no style attribute. */
export const CHART_STYLE = [
  "#1f77b4",
  "#d62728",
  "#2ca02c",
  "#9467bd",
  "#ff7f0e",
  "#17becf",
  "#8c564b",
  "#e377c2",
  "#7f7f7f",
]
  .map((color, i) => `.swatch-${i} { color: ${color}; }`)
  .join("\n");
