import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorLines, ROOT, runSync } from "./run-sync-cli.js";

const FIXTURE = join(ROOT, "test/fixtures/manifests");
/**
 * HTTPRoutes and an Ingress with their Services: two objects that do not validate (skipped), a rule with an
 * unsupported filter, a path to a missing Service and an invalid annotation (each trimmed by the translation).
 * The HTTPRoute `mirror` is written for v1beta1, which the Gateway API's CRDs serve with v1's schema.
 */
const ROUTE_MANIFESTS = `apiVersion: v1
kind: List
items:
  - { apiVersion: v1, kind: Service, metadata: { name: stable, namespace: shop }, spec: { ports: [{ name: http, port: 80 }] } }
  - { apiVersion: v1, kind: Service, metadata: { name: canary, namespace: shop }, spec: { ports: [{ name: http, port: 80 }] } }
  - apiVersion: v1
    kind: Service
    metadata: { name: legacy, namespace: shop, annotations: { edgeslice.io/hosts: "not a host!" } }
    spec: { ports: [{ name: http, port: 80 }] }
  - { apiVersion: gateway.networking.k8s.io/v1, kind: GatewayClass, metadata: { name: edgeslice }, spec: { controllerName: edgeslice.io/gateway-controller } }
  - apiVersion: gateway.networking.k8s.io/v1
    kind: Gateway
    metadata: { name: edge, namespace: shop }
    spec: { gatewayClassName: edgeslice, listeners: [{ name: http, port: 80, protocol: HTTP }] }
  - apiVersion: gateway.networking.k8s.io/v1
    kind: HTTPRoute
    metadata: { name: web, namespace: shop }
    spec:
      parentRefs: [{ name: edge }]
      hostnames: [shop.example, "*.shop.example"]
      rules:
        - matches: [{ path: { type: Exact, value: /cart }, headers: [{ name: X-Canary, value: "1" }], method: POST }]
          filters: [{ type: RequestHeaderModifier, requestHeaderModifier: { set: [{ name: X-Env, value: prod }] } }]
          backendRefs: [{ name: canary, port: 80 }]
        - backendRefs: [{ name: stable, port: 80, weight: 90 }, { name: canary, port: 80, weight: 10 }]
  - apiVersion: gateway.networking.k8s.io/v1beta1
    kind: HTTPRoute
    metadata: { name: mirror, namespace: shop }
    spec:
      parentRefs: [{ name: edge }]
      hostnames: [mirror.example]
      rules:
        - filters: [{ type: ExtensionRef, extensionRef: { group: example.io, kind: Thing, name: x } }]
          backendRefs: [{ name: stable, port: 80 }]
        - { matches: [{ path: { type: PathPrefix, value: /ok } }], backendRefs: [{ name: stable, port: 80 }] }
  - { apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: { name: broken, namespace: shop }, spec: { rules: 5 } }
  - { apiVersion: networking.k8s.io/v1, kind: IngressClass, metadata: { name: edgeslice }, spec: { controller: edgeslice.io/ingress-controller } }
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: { name: site, namespace: shop }
    spec:
      ingressClassName: edgeslice
      defaultBackend: { service: { name: stable, port: { number: 80 } } }
      rules:
        - host: site.example
          http:
            paths:
              - { path: /docs/, pathType: Prefix, backend: { service: { name: stable, port: { name: http } } } }
              - { path: /about, pathType: Exact, backend: { service: { name: missing, port: { number: 80 } } } }
  - { apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: { name: garbled, namespace: shop }, spec: { rules: 5 } }
`;

const EMPTY = { endpoints: [], fallback: false, draining: [] };

describe("npm run sync -- --from DIR --print", () => {
  it("prints one contract line per Service port and reports skipped manifests on stderr", async () => {
    const run = await runSync(["--from", FIXTURE, "--print"], { CLUSTER_NAME: "east" });
    expect(run.code).toBe(0);
    const expected = [
      { service: "other/web", port: 80, ipv4: { endpoints: ["10.2.0.1:80"], fallback: false, draining: [] } },
      {
        service: "shop/dns",
        port: 53,
        ipv4: { endpoints: ["10.0.1.1:5353", "10.1.1.1:5353"], fallback: false, draining: [] },
      },
      {
        service: "shop/dns",
        port: 53,
        ipv4: { endpoints: ["10.0.1.1:5354"], fallback: false, draining: [] },
      },
      { service: "shop/empty", port: 80, ipv4: EMPTY },
      {
        service: "shop/web",
        port: 80,
        ipv4: {
          endpoints: ["10.0.0.9:8080", "10.0.0.10:8080", "10.0.0.11:8080", "10.0.0.12:8080"],
          fallback: false,
          draining: [],
        },
        ipv6: {
          endpoints: ["[fd00::a]:8080", "[fd00::b]:8080"],
          fallback: true,
          draining: ["[fd00::a]:8080", "[fd00::b]:8080"],
        },
      },
      {
        service: "shop/web",
        port: 443,
        ipv4: {
          endpoints: ["10.0.0.9:8443", "10.0.0.10:8443"],
          fallback: false,
          draining: ["10.0.0.11:8443"],
        },
      },
    ].map((line) =>
      JSON.stringify({
        cluster: "east",
        service: line.service,
        port: line.port,
        ipv4: line.ipv4,
        ipv6: line.ipv6 ?? EMPTY,
      }),
    );
    // Then one line per route: shop/web is the fixture's one annotated Service.
    const route = JSON.stringify({
      cluster: "east",
      route: "annotation:shop/web",
      source: "annotation",
      createdAt: 0,
      hostnames: ["shop.example"],
      wildcard: "one-label",
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
          filters: {},
          backends: [{ service: "shop/web", port: 80, weight: 1 }],
        },
      ],
    });
    expect(run.stdout.split("\n")).toEqual([...expected, route, ""]);

    const logged = run.stderr
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { level: string; msg: string; file: string; path: string; error: string },
      );
    const problems = logged.filter((line) => line.msg === "skipped manifest");
    expect(problems.map(({ level, file, path }) => ({ level, file, path }))).toEqual([
      { level: "warn", file: "bad-objects.yaml", path: "items[1]" },
      { level: "warn", file: "bad-objects.yaml", path: "items[2]" },
      { level: "warn", file: "broken.json", path: "(root)" },
      { level: "warn", file: "broken.yaml", path: "(root)" },
    ]);
    for (const problem of problems) expect(problem.error.length).toBeGreaterThan(0);
  });

  it("prints one line per HTTPRoute and Ingress route, and names each skipped or trimmed object once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgeslice-print-"));
    try {
      writeFileSync(join(dir, "routes.yaml"), ROUTE_MANIFESTS);
      const run = await runSync(["--from", dir, "--print"], { CLUSTER_NAME: "east" });
      expect(run.code).toBe(0);
      const lines = run.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const routes = lines.filter((line) => "route" in line);
      const to = (service: string, weight = 1) => ({ service: `shop/${service}`, port: 80, weight });
      const prefix = (value: string) => ({ path: { type: "PathPrefix", value }, headers: [] });
      const route = (route: string, source: string, fields: object) =>
        Object.assign({ cluster: "east", route, source, createdAt: 0 }, fields);
      expect(routes).toEqual([
        route("httproute:shop/mirror", "httproute", {
          hostnames: ["mirror.example"],
          listeners: [{ gateway: "shop/edge", hostnames: ["mirror.example"], port: 80 }],
          wildcard: "suffix",
          rules: [{ matches: [prefix("/ok")], filters: {}, backends: [to("stable")] }],
        }),
        route("httproute:shop/web", "httproute", {
          hostnames: ["*.shop.example", "shop.example"],
          listeners: [{ gateway: "shop/edge", hostnames: ["*.shop.example", "shop.example"], port: 80 }],
          wildcard: "suffix",
          rules: [
            {
              matches: [
                {
                  path: { type: "Exact", value: "/cart" },
                  headers: [{ name: "x-canary", value: "1" }],
                  method: "POST",
                },
              ],
              filters: { requestHeaders: { set: [{ name: "x-env", value: "prod" }], add: [], remove: [] } },
              backends: [to("canary")],
            },
            { matches: [prefix("/")], filters: {}, backends: [to("stable", 90), to("canary", 10)] },
          ],
        }),
        route("ingress:shop/site#default-backend", "ingress", {
          hostnames: [],
          wildcard: "one-label",
          fallback: true,
          rules: [{ matches: [prefix("/")], filters: {}, backends: [to("stable")] }],
        }),
        route("ingress:shop/site#host:site.example", "ingress", {
          hostnames: ["site.example"],
          wildcard: "one-label",
          rules: [
            { matches: [prefix("/docs")], filters: {}, backends: [to("stable")] },
            {
              matches: [{ path: { type: "Exact", value: "/about" }, headers: [] }],
              filters: {},
              backends: [to("missing")],
            },
          ],
        }),
      ]);
      // Key order is the contract: cluster and route first, then the record's fields as stored.
      expect(Object.keys(routes[0] ?? {}).slice(0, 3)).toEqual(["cluster", "route", "source"]);

      const logged = run.stderr
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const named = logged.map((line) => `${line.msg}: ${line.path ?? line.object ?? line.service}`);
      expect(named.sort()).toEqual(
        [
          "skipped manifest: items[7]",
          "skipped manifest: items[10]",
          "route object not fully applied: HTTPRoute shop/mirror",
          "route object not fully applied: Ingress shop/site",
          "service annotations invalid, not routed: shop/legacy",
        ].sort(),
      );
      expect(logged.every((line) => line.level === "warn")).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("labels the lines with cluster local when CLUSTER_NAME is unset", async () => {
    const run = await runSync(["--from", FIXTURE, "--print"], { CLUSTER_NAME: undefined });
    expect(run.code).toBe(0);
    const clusters = run.stdout
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { cluster: string }).cluster);
    expect(new Set(clusters)).toEqual(new Set(["local"]));
  });

  it("exits 1 with a JSON error when the folder cannot be read", async () => {
    const run = await runSync(["--from", join(FIXTURE, "no-such-folder"), "--print"], {});
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(JSON.parse(run.stderr.trim())).toMatchObject({
      level: "error",
      msg: "cannot read manifest folder",
    });
  });

  it("exits 2 with one error line naming an unknown flag and pointing at --help", async () => {
    const run = await runSync(["--frm", FIXTURE], {});
    expect(run.code).toBe(2);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      "Unknown option '--frm': run `node dist/sync.js --help` for the options it takes",
    ]);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("exits 78 (a bad setting) with one error line for an invalid CLUSTER_NAME", async () => {
    const run = await runSync(["--from", FIXTURE, "--print"], { CLUSTER_NAME: "East_1" });
    expect(run.code).toBe(78);
    expect(run.stdout).toBe("");
    expect(errorLines(run.stderr)).toEqual([
      expect.objectContaining({ msg: "CLUSTER_NAME must be a DNS-1123 label (a-z, 0-9, '-')" }),
    ]);
  });

  it("prints usage with --help", async () => {
    const run = await runSync(["--help"], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--from DIR");
  });
});
