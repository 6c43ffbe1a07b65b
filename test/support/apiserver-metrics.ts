/**
 * Sums the `apiserver_request_total` samples of a kube-apiserver's /metrics text whose verb and resource (and
 * scope, when given) labels match, over every code.
 */
export function sumRequests(metricsText: string, verb: string, resource: string, scope?: string): number {
  let total = 0;
  for (const line of metricsText.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    if (!line.includes(`verb="${verb}"`) || !line.includes(`resource="${resource}"`)) continue;
    if (scope !== undefined && !line.includes(`scope="${scope}"`)) continue;
    total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}
