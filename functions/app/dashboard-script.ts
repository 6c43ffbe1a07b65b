import { DASHBOARD_CHARTS } from "./dashboard-charts.js";

/**
 * The dashboard page's only script, inlined and allowed by its hash (dashboard-page.ts). Plain ES2017 for
 * any current browser; it writes every datum with textContent, never as HTML. The admin token is asked for
 * once per tab, kept in sessionStorage and sent as a Bearer token; a 401 forgets it and asks again.
 * Charts come from the router's own ring of samples (`history`); the requests table's rates are the
 * difference of the cumulative counters between two refreshes over the time between them.
 */
export const DASHBOARD_SCRIPT = `
"use strict";
(function () {
  var KEY = "edgeslice.adminToken";
  var PERIOD_MS = 2000;
  var STATES = ["ready", "fallback", "draining", "ejected"];
  var timer = 0;
  var previous = null;
  var previousSteering = null;

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(cells) {
    var tr = el("tr");
    cells.forEach(function (cell) {
      var td = el("td");
      if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell;
      tr.appendChild(td);
    });
    return tr;
  }
  function fill(id, rows, empty) {
    var body = $(id);
    body.replaceChildren();
    if (rows.length === 0) {
      var td = el("td", empty, "muted");
      td.colSpan = 6;
      var tr = el("tr");
      tr.appendChild(td);
      body.appendChild(tr);
    }
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function badge(text, kind) { return el("span", text, "badge " + kind); }
  function age(s) {
    if (s === null || s === undefined) return "unknown";
    if (s < 60) return s.toFixed(1) + " s";
    if (s < 3600) return Math.floor(s / 60) + " min";
    return (s / 3600).toFixed(1) + " h";
  }
  function group(nodes) {
    var span = el("span");
    nodes.forEach(function (n) { span.appendChild(n); });
    return span;
  }
${DASHBOARD_CHARTS}
  function showLogin(message) {
    clearTimeout(timer);
    previous = null;
    $("app").hidden = true;
    $("signout").hidden = true;
    $("login").hidden = false;
    setStatus("admin token needed", false);
    $("login-message").textContent = message || "";
    $("token").focus();
  }
  function showApp() {
    $("login").hidden = true;
    $("signout").hidden = false;
    $("app").hidden = false;
  }
  function setStatus(text, bad) {
    var status = $("status");
    status.textContent = text;
    status.className = bad ? "bad" : "";
  }

  function familyCell(counts, inUse) {
    var parts = [];
    STATES.forEach(function (state) {
      if (counts[state] > 0) parts.push(counts[state] + " " + state);
    });
    if (parts.length === 0) return el("span", "none", "muted");
    var nodes = [el("span", parts.join(" \\u00b7 "))];
    if (inUse) nodes.push(document.createTextNode(" "), badge("in use", "use"));
    return group(nodes);
  }

  function renderClusters(clusters) {
    fill("clusters", clusters.map(function (c) {
      return row([
        c.name,
        c.expired
          ? badge("expired: serves nothing", "stale")
          : c.stale
            ? badge("stale", "stale")
            : badge("fresh", "fresh"),
        String(c.services),
        age(c.heartbeatAgeSeconds),
        c.apiserver === "unreachable"
          ? badge("unreachable for " + age(c.apiserverUnreachableSeconds), "stale")
          : c.stale
            ? el("span", "unknown: the cluster is stale", "muted")
            : c.apiserver
      ]);
    }), "no cluster has published yet");
  }

  function ruleText(rule) {
    var total = 0;
    rule.backends.forEach(function (b) { total += b.weight; });
    var to = rule.backends.map(function (b) {
      var share = rule.backends.length > 1 ? " " + (total > 0 ? Math.round(100 * b.weight / total) : 0) + "%" : "";
      return b.service + (b.port ? ":" + b.port : "") + share;
    }).join(", ");
    return (rule.matches.length ? rule.matches.join(" | ") : "every request") + " \u2192 " + (to || "redirect");
  }

  function podCell(c) {
    if (c.pods.length === 0) return el("span", "none", "muted");
    var nodes = c.pods.map(function (p) {
      var chip = el("span", p.address, "pod pod-" + p.state);
      chip.title = p.state + " (" + p.family + ")";
      return chip;
    });
    if (c.morePods > 0) nodes.push(el("span", "+" + c.morePods + " more", "muted"));
    var spaced = [];
    nodes.forEach(function (n, i) { if (i > 0) spaced.push(document.createTextNode(" ")); spaced.push(n); });
    return group(spaced);
  }

  function renderRoutes(routes) {
    var rows = [];
    routes.forEach(function (route) {
      var where = el("div");
      var host = el("div", route.hosts.length > 0 ? route.hosts.join(", ") : "*", "host");
      if (route.failStatic) host.appendChild(badge("fail static", "stale"));
      where.appendChild(host);
      route.rules.forEach(function (rule) { where.appendChild(el("div", ruleText(rule), "rule")); });
      if (route.clusters.length === 0) { rows.push(row([where, el("span", "no backends published", "muted"), "", "", "", ""])); return; }
      route.clusters.forEach(function (c, i) {
        var cluster = group([el("span", c.cluster + " "), c.stale ? badge("stale", "stale") : el("span")]);
        rows.push(row([
          i === 0 ? where : "",
          cluster,
          c.service + ":" + c.port,
          familyCell(c.families.ipv4, c.uses === "ipv4"),
          familyCell(c.families.ipv6, c.uses === "ipv6"),
          podCell(c)
        ]));
      });
    });
    fill("routes", rows, "no routes published");
  }

  function renderPods(routes) {
    var seen = {};
    var rows = [];
    routes.forEach(function (route) {
      route.clusters.forEach(function (c) {
        c.pods.forEach(function (p) {
          var key = c.cluster + " " + p.address;
          if ((p.state !== "ejected" && p.state !== "draining") || seen[key]) return;
          seen[key] = true;
          rows.push(row([c.cluster, c.service + ":" + c.port, p.address, badge(p.state, p.state === "ejected" ? "stale" : "drain")]));
        });
      });
    });
    fill("pods", rows, "every pod is in rotation: none ejected, none draining");
  }

  function renderServices(services, now) {
    var dt = previous ? (now - previous.at) / 1000 : 0;
    var totals = {};
    var byService = {};
    var order = [];
    services.forEach(function (s) {
      var key = s.service + "\\u0000" + s.cluster;
      totals[key] = s;
      var before = previous ? previous.totals[key] : undefined;
      var requests = s.requests - (before ? before.requests : 0);
      var errors = s.errors - (before ? before.errors : 0);
      // A router restart resets the counters: count everything since then, as Prometheus' rate() does.
      if (requests < 0 || errors < 0) { requests = s.requests; errors = s.errors; }
      var entry = byService[s.service];
      if (!entry) { entry = byService[s.service] = { requests: 0, errors: 0, clusters: [] }; order.push(s.service); }
      entry.requests += requests;
      entry.errors += errors;
      entry.clusters.push((s.cluster || "router") + (dt > 0 ? " " + (requests / dt).toFixed(1) + "/s" : ""));
    });
    previous = { at: now, totals: totals };
    fill("services", order.map(function (name) {
      var entry = byService[name];
      var rate = dt > 0 ? (entry.requests / dt).toFixed(1) : "measuring";
      var ratio = dt > 0 && entry.requests > 0 ? (100 * entry.errors / entry.requests).toFixed(1) + " %" : "-";
      var ratioCell = el("span", ratio, dt > 0 && entry.errors > 0 ? "bad" : "");
      return row([name || "(no route)", rate, ratioCell, entry.clusters.join(", ")]);
    }), "no requests yet");
  }

  function renderRefused(refused) {
    fill("refused", refused.map(function (r) {
      var what = r.kind === "cluster" ? "not listed: " + r.count + " routes and services ignored"
        : r.kind === "route" ? "route " + r.id + " for " + r.refused.join(", ")
        : r.kind === "records" ? r.count + " records over its budget: " + r.refused.join("; ") + (r.count > r.refused.length ? "; ..." : "")
        : r.kind === "changes" ? "change stream over CLUSTER_MAX_CHANGES_PER_SECOND: applied at that rate"
        : r.count + " endpoints of " + r.id + " outside its networks: " + r.refused.join(", ") + (r.count > r.refused.length ? ", ..." : "");
      return row([r.cluster, badge(r.kind, "stale"), what]);
    }), "nothing refused");
  }

  // Each steered Service's share of requests per first-chosen cluster since the last refresh (all so far on the first).
  function renderSteering(steering) {
    if (!steering) { fill("steering", [], "not available"); return; }
    var states = {};
    steering.clusters.forEach(function (c) { states[c.name] = c; });
    var counts = {};
    var byService = {};
    var order = [];
    steering.decisions.forEach(function (d) {
      var key = d.service + "\\u0000" + d.cluster + "\\u0000" + d.reason;
      counts[key] = d.count;
      var before = previousSteering ? previousSteering[key] || 0 : 0;
      var n = d.count - before;
      if (n < 0) n = d.count;
      var entry = byService[d.service];
      if (!entry) { entry = byService[d.service] = { policy: d.policy, total: 0, clusters: {}, reasons: {} }; order.push(d.service); }
      entry.total += n;
      entry.clusters[d.cluster] = (entry.clusters[d.cluster] || 0) + n;
      entry.reasons[d.reason] = (entry.reasons[d.reason] || 0) + n;
    });
    previousSteering = counts;
    function shares(map, total, note) {
      return Object.keys(map).sort().map(function (k) {
        var pct = total > 0 ? (100 * map[k] / total).toFixed(1) + " %" : "-";
        return k + " " + pct + (note ? note(k) : "");
      }).join(" \u00b7 ");
    }
    fill("steering", order.map(function (name) {
      var e = byService[name];
      var note = function (cluster) {
        var c = states[cluster];
        if (!c) return "";
        return (c.ewmaMs !== null ? " (" + c.ewmaMs + " ms)" : "") + (c.state !== "healthy" ? " " + c.state : "");
      };
      return row([name, e.policy, shares(e.clusters, e.total, note), shares(e.reasons, e.total)]);
    }), "no steered requests yet");
  }

  function render(data, now) {
    var store = data.store === undefined || data.store === null
      ? "memory store"
      : data.store.connected ? "store connected" : "store unreachable: serving last known";
    var snapshot = data.version === null ? "no snapshot" : "snapshot v" + data.version + ", " + age(data.ageSeconds) + " old";
    setStatus(snapshot + " \\u00b7 " + store + " \\u00b7 refreshed " + new Date().toLocaleTimeString(),
      data.store ? !data.store.connected : data.version === null);
    renderClusters(data.clusters);
    renderHistory(data.history);
    renderRoutes(data.routes);
    renderPods(data.routes);
    renderServices(data.services, now);
    renderRefused(data.refused || []);
    renderSteering(data.steering);
    $("notes").textContent = data.notes.join("; ");
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, PERIOD_MS);
  }

  function refresh() {
    var token = sessionStorage.getItem(KEY);
    if (!token) { showLogin(""); return; }
    fetch("dashboard", { headers: { authorization: "Bearer " + token }, cache: "no-store" })
      .then(function (res) {
        if (res.status === 401) { sessionStorage.removeItem(KEY); showLogin("That token was not accepted."); return; }
        if (!res.ok) { showApp(); setStatus("the router answered HTTP " + res.status, true); schedule(); return; }
        return res.json().then(function (data) { showApp(); render(data, performance.now()); schedule(); });
      })
      .catch(function (error) { setStatus("router unreachable: " + error.message, true); schedule(); });
  }

  $("login").addEventListener("submit", function (event) {
    event.preventDefault();
    var value = $("token").value.trim();
    if (!value) return;
    sessionStorage.setItem(KEY, value);
    $("token").value = "";
    refresh();
  });
  $("signout").addEventListener("click", function () {
    sessionStorage.removeItem(KEY);
    showLogin("");
  });
  refresh();
})();
`;
