import type { StateCounts } from "../../core/selection/backend-states.js";
import type { GrantRefusal } from "../../core/trust/granted-clusters.js";
import type { DashboardCluster, DashboardRoute } from "../dashboard-data.js";
import { age, badge, type Cell, el, fill, group, row } from "./dom.js";

/** The tables drawn from one answer of `/dashboard` alone: clusters, routes, pods out of rotation, refusals. */

const STATES = ["ready", "fallback", "draining", "ejected"] as const;

type RouteCluster = DashboardRoute["clusters"][number];
type Rule = DashboardRoute["rules"][number];

function familyCell(counts: StateCounts, inUse: boolean): HTMLSpanElement {
  const parts = STATES.filter((state) => counts[state] > 0).map((state) => `${counts[state]} ${state}`);
  if (parts.length === 0) return el("span", "none", "muted");
  const nodes: Node[] = [el("span", parts.join(" \u00b7 "))];
  if (inUse) nodes.push(document.createTextNode(" "), badge("in use", "use"));
  return group(nodes);
}

function apiserverCell(cluster: DashboardCluster): Cell {
  if (cluster.apiserver === "unreachable")
    return badge(`unreachable for ${age(cluster.apiserverUnreachableSeconds)}`, "stale");
  return cluster.stale ? el("span", "unknown: the cluster is stale", "muted") : cluster.apiserver;
}

export function renderClusters(clusters: readonly DashboardCluster[]): void {
  const state = (cluster: DashboardCluster) =>
    cluster.expired
      ? badge("expired: serves nothing", "stale")
      : cluster.stale
        ? badge("stale", "stale")
        : badge("fresh", "fresh");
  const rows = clusters.map((cluster) =>
    row([
      cluster.name,
      state(cluster),
      String(cluster.services),
      age(cluster.heartbeatAgeSeconds),
      apiserverCell(cluster),
    ]),
  );
  fill("clusters", rows, "no cluster has published yet");
}

function ruleText(rule: Rule): string {
  let total = 0;
  for (const backend of rule.backends) total += backend.weight;
  const to = rule.backends
    .map((backend) => {
      const percent = total > 0 ? Math.round((100 * backend.weight) / total) : 0;
      const share = rule.backends.length > 1 ? ` ${percent}%` : "";
      return `${backend.service}${backend.port ? `:${backend.port}` : ""}${share}`;
    })
    .join(", ");
  return `${rule.matches.length ? rule.matches.join(" | ") : "every request"} \u2192 ${to || "redirect"}`;
}

function podCell(cluster: RouteCluster): HTMLSpanElement {
  if (cluster.pods.length === 0) return el("span", "none", "muted");
  const nodes: Node[] = cluster.pods.map((pod) => {
    const chip = el("span", pod.address, `pod pod-${pod.state}`);
    chip.title = `${pod.state} (${pod.family})`;
    return chip;
  });
  if (cluster.morePods > 0) nodes.push(el("span", `+${cluster.morePods} more`, "muted"));
  const spaced: Node[] = [];
  nodes.forEach((node, i) => {
    if (i > 0) spaced.push(document.createTextNode(" "));
    spaced.push(node);
  });
  return group(spaced);
}

function routeRows(route: DashboardRoute): HTMLTableRowElement[] {
  const where = el("div");
  const host = el("div", route.hosts.length > 0 ? route.hosts.join(", ") : "*", "host");
  if (route.failStatic) host.appendChild(badge("fail static", "stale"));
  where.appendChild(host);
  for (const rule of route.rules) where.appendChild(el("div", ruleText(rule), "rule"));
  if (route.clusters.length === 0)
    return [row([where, el("span", "no backends published", "muted"), "", "", "", ""])];
  return route.clusters.map((cluster, i) =>
    row([
      i === 0 ? where : "",
      group([el("span", `${cluster.cluster} `), cluster.stale ? badge("stale", "stale") : el("span")]),
      `${cluster.service}:${cluster.port}`,
      familyCell(cluster.families.ipv4, cluster.uses === "ipv4"),
      familyCell(cluster.families.ipv6, cluster.uses === "ipv6"),
      podCell(cluster),
    ]),
  );
}

export function renderRoutes(routes: readonly DashboardRoute[]): void {
  fill("routes", routes.flatMap(routeRows), "no routes published");
}

/** Every ejected or draining pod once per cluster, whichever routes reach it. */
export function renderPods(routes: readonly DashboardRoute[]): void {
  const seen = new Set<string>();
  const rows: HTMLTableRowElement[] = [];
  for (const route of routes) {
    for (const cluster of route.clusters) {
      for (const pod of cluster.pods) {
        const key = `${cluster.cluster} ${pod.address}`;
        if ((pod.state !== "ejected" && pod.state !== "draining") || seen.has(key)) continue;
        seen.add(key);
        const state = badge(pod.state, pod.state === "ejected" ? "stale" : "drain");
        rows.push(row([cluster.cluster, `${cluster.service}:${cluster.port}`, pod.address, state]));
      }
    }
  }
  fill("pods", rows, "every pod is in rotation: none ejected, none draining");
}

function refusalText(refusal: GrantRefusal): string {
  const more = (separator: string) => (refusal.count > refusal.refused.length ? `${separator}...` : "");
  switch (refusal.kind) {
    case "cluster":
      return `not listed: ${refusal.count} routes and services ignored`;
    case "route":
      return `route ${refusal.id} for ${refusal.refused.join(", ")}`;
    case "records":
      return `${refusal.count} records over its budget: ${refusal.refused.join("; ")}${more("; ")}`;
    case "changes":
      return "change stream over CLUSTER_MAX_CHANGES_PER_SECOND: applied at that rate";
    default:
      return `${refusal.count} endpoints of ${refusal.id} outside its networks: ${refusal.refused.join(", ")}${more(", ")}`;
  }
}

export function renderRefused(refused: readonly GrantRefusal[]): void {
  const rows = refused.map((refusal) =>
    row([refusal.cluster, badge(refusal.kind, "stale"), refusalText(refusal)]),
  );
  fill("refused", rows, "nothing refused");
}
