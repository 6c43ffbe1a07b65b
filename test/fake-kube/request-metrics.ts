import type { ResourceRequest } from "./request-info.js";

/**
 * `apiserver_request_total` as kube-apiserver exposes it on /metrics: requests its handlers served, by verb,
 * group, version, resource, subresource, scope and code, the verb in the metric's upper-case form (LIST,
 * WATCH, GET, POST, PUT...). A request is counted when it ends, so a WATCH only once its stream closed. The
 * metric names no client.
 */
export class RequestMetrics {
  private readonly totals = new Map<string, number>();

  record(request: ResourceRequest, code: number): void {
    const labels = [
      ["code", String(code)],
      ["component", "apiserver"],
      ["dry_run", ""],
      ["group", request.apiGroup],
      ["resource", request.resource],
      ["scope", scopeOf(request)],
      ["subresource", request.subresource],
      ["verb", METRIC_VERBS[request.verb] ?? request.verb.toUpperCase()],
      ["version", request.apiVersion],
    ];
    const key = labels.map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(",");
    this.totals.set(key, (this.totals.get(key) ?? 0) + 1);
  }

  /** The Prometheus text exposition of the counter. */
  render(): string {
    const lines = [
      "# HELP apiserver_request_total Requests served, by verb, group, version, resource, scope and code.",
      "# TYPE apiserver_request_total counter",
      ...[...this.totals].map(([labels, total]) => `apiserver_request_total{${labels}} ${total}`),
    ];
    return `${lines.join("\n")}\n`;
  }
}

const METRIC_VERBS: Readonly<Record<string, string>> = {
  create: "POST",
  update: "PUT",
  deletecollection: "DELETE",
};

/**
 * "resource" for one object (a create too), "namespace" for a namespace's collection, "cluster" for every
 * namespace's or a cluster-scoped kind's.
 */
function scopeOf(request: ResourceRequest): string {
  if (request.name !== undefined || request.verb === "create") return "resource";
  return request.namespace === undefined ? "cluster" : "namespace";
}
