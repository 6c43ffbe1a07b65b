import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { DEFAULT_DRAIN_MS } from "../../functions/node/server.js";
import { routerAclRules } from "../../store/acl.js";
import {
  container,
  type Deployment,
  envOf,
  examples,
  type KubeObject,
  only,
  ROOT,
  render,
} from "./support/render.js";

let base: KubeObject[] = [];
let eastRouter: KubeObject[] = [];
let eastSync: KubeObject[] = [];

beforeAll(async () => {
  base = await render("deploy/router");
  eastRouter = await render("deploy/overlays/east-router");
  eastSync = await render("deploy/overlays/east");
});

/** How long the router drains on SIGTERM before it cuts what is left. */
function drainBoundSeconds(): number {
  return DEFAULT_DRAIN_MS / 1000;
}

/** Redis quit, pool teardown and process exit after the drain; generous for a loaded node. */
const STOP_AFTER_DRAIN_SECONDS = 5;

describe("deploy/router", () => {
  it("probes liveness on /_edgeslice/livez, which no Redis outage fails, and readiness on /_edgeslice/readyz, on PORT", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const main = container(deployment);
    const port = main.ports?.find((p) => p.name === "http");

    expect(port?.containerPort).toBe(Number(envOf(deployment).get("PORT")?.value));
    expect(main.startupProbe?.httpGet).toEqual({ path: "/_edgeslice/livez", port: "http" });
    expect(main.livenessProbe?.httpGet).toEqual({ path: "/_edgeslice/livez", port: "http" });
    expect(main.readinessProbe?.httpGet).toEqual({ path: "/_edgeslice/readyz", port: "http" });
  });

  it("leaves the number of routers to the HorizontalPodAutoscaler: no replicas an apply would reset", () => {
    for (const objects of [base, eastRouter]) {
      const deployment = only<Deployment>(objects, "Deployment");
      expect(deployment.spec).not.toHaveProperty("replicas");
      expect(only(objects, "HorizontalPodAutoscaler").spec).toMatchObject({
        scaleTargetRef: { kind: "Deployment", name: deployment.metadata.name },
      });
    }
  });

  it("gives the preStop sleep plus the router's drain bound room within terminationGracePeriodSeconds", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const preStop = container(deployment).lifecycle?.preStop?.exec?.command ?? [];
    const grace = deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30;

    expect(preStop[0]).toBe("sleep");
    const sleepSeconds = Number(preStop[1]);
    expect(sleepSeconds).toBeGreaterThan(0);
    expect(sleepSeconds + drainBoundSeconds() + STOP_AFTER_DRAIN_SECONDS).toBeLessThanOrEqual(grace);
  });

  it("reads Redis through the router Secret and never talks to the Kubernetes API", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const env = envOf(deployment);

    expect(env.get("REDIS_URL")?.valueFrom?.secretKeyRef).toEqual({
      name: "edgeslice-redis-router",
      key: "url",
    });
    expect(env.get("ADMIN_TOKEN")?.valueFrom?.secretKeyRef).toMatchObject({ optional: true });
    expect(deployment.spec.template.spec).toMatchObject({ automountServiceAccountToken: false });
  });

  it("exposes the http port through the Service, and the admin port to the monitoring namespace only", () => {
    const service = only(base, "Service").spec as { ports: { port: number; targetPort: string }[] };
    const policy = only(base, "NetworkPolicy").spec as {
      policyTypes: string[];
      ingress: { ports: { port: string }[]; from?: unknown[] }[];
    };

    expect(service.ports).toEqual([
      { name: "http", port: 80, targetPort: "http", protocol: "TCP" },
      { name: "https", port: 443, targetPort: "https", protocol: "TCP" },
    ]);
    expect(policy.policyTypes).toEqual(["Ingress"]);
    expect(policy.ingress.map((rule) => [rule.ports.map((p) => p.port), rule.from])).toEqual([
      [["http", "https"], undefined],
      [["admin"], [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]],
    ]);
  });

  it("serves admin on ADMIN_PORT, a containerPort that no Service exposes, the LoadBalancer's included", () => {
    for (const objects of [base, eastRouter]) {
      const deployment = only<Deployment>(objects, "Deployment");
      const env = envOf(deployment);
      const admin = container(deployment).ports?.find((p) => p.name === "admin");
      const config = parseRouterConfig({
        PORT: env.get("PORT")?.value,
        ADMIN_PORT: env.get("ADMIN_PORT")?.value,
      });
      const service = only(objects, "Service").spec as { ports: { port: number; targetPort: string }[] };

      expect(admin?.containerPort).toBe(config.adminPort);
      // HTTPS_PORT is the containerPort the Service's https port targets.
      const https = container(deployment).ports?.find((p) => p.name === "https");
      expect(https?.containerPort).toBe(
        parseRouterConfig({ HTTPS_PORT: env.get("HTTPS_PORT")?.value }).httpsPort,
      );
      expect(config.adminPort).not.toBe(config.port);
      expect(service.ports.map((p) => p.targetPort)).not.toContain("admin");
    }
  });

  it("keeps at least one router through voluntary disruptions and scales on CPU (autoscaling/v2)", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const pdb = only(base, "PodDisruptionBudget").spec as { maxUnavailable: number };
    const hpa = only(base, "HorizontalPodAutoscaler");
    const spec = hpa.spec as {
      scaleTargetRef: { apiVersion: string; kind: string; name: string };
      minReplicas: number;
      maxReplicas: number;
      metrics: { resource: { name: string } }[];
    };

    expect(pdb.maxUnavailable).toBe(1);
    expect(hpa.apiVersion).toBe("autoscaling/v2");
    expect(spec.scaleTargetRef).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: "edgeslice-router",
    });
    expect(spec.minReplicas).toBeGreaterThan(pdb.maxUnavailable);
    expect(spec.maxReplicas).toBeGreaterThan(spec.minReplicas);
    expect(spec.metrics.map((metric) => metric.resource.name)).toEqual(["cpu"]);
    expect(container(deployment).resources?.requests?.cpu).toBeDefined();
  });

  it("gives V8 a heap limit well under the container's memory limit (issue 35: hostile clusters' garbage)", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const options = envOf(deployment).get("NODE_OPTIONS")?.value ?? "";
    const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(options)?.[1]);
    const limit = container(deployment).resources?.limits?.memory ?? "";
    const limitMiB = Number(/^(\d+)Mi$/.exec(limit)?.[1]);
    // Room above the heap for Node itself, its code and the buffers of requests and Redis replies.
    expect(heapMiB).toBeGreaterThan(0);
    expect(heapMiB).toBeLessThanOrEqual(limitMiB - 128);
  });

  it("shows the router's Redis Secret with the read-only ACL user and its exact ACL line", () => {
    const example = examples().find((file) => file.file === "deploy/router/redis-secret.example.yaml");
    const secrets = (example?.objects ?? []) as (KubeObject & { stringData: Record<string, string> })[];
    const redis = secrets.find((secret) => secret.metadata.name === "edgeslice-redis-router");
    const admin = secrets.find((secret) => secret.metadata.name === "edgeslice-router-admin");
    const [on, ...rules] = routerAclRules("edgeslice");
    const text = readFileSync(join(ROOT, "deploy/router/redis-secret.example.yaml"), "utf8");

    expect(new URL(redis?.stringData.url ?? "").username).toBe("edgeslice-router");
    expect(admin?.stringData.token).toBeDefined();
    expect(text).toContain(`ACL SETUSER edgeslice-router ${on} >PASSWORD ${rules.join(" ")}\n`);
  });
});

describe("deploy/components/router-pod-monitor and sync-pod-monitor", () => {
  it("scrape the router's admin port with the admin token, and the sync's metrics port", async () => {
    const routers = await render("test/deploy/support/with-pod-monitors/router");
    const syncs = await render("test/deploy/support/with-pod-monitors/sync");
    const endpointsOf = (objects: KubeObject[], name: string) => {
      const monitor = objects.find((o) => o.kind === "PodMonitor" && o.metadata.name === name);
      return monitor as
        | (KubeObject & { spec: { podMetricsEndpoints: unknown[]; selector: unknown } })
        | undefined;
    };
    const router = endpointsOf(routers, "edgeslice-router");
    const sync = endpointsOf(syncs, "edgeslice-sync");
    const routerPort = container(only<Deployment>(routers, "Deployment")).ports?.find(
      (p) => p.name === "admin",
    );
    const syncPort = container(only<Deployment>(syncs, "Deployment")).ports?.find(
      (p) => p.name === "metrics",
    );

    expect(router?.metadata.namespace).toBe("edgeslice");
    expect(router?.spec.podMetricsEndpoints).toEqual([
      {
        port: "admin",
        path: "/_edgeslice/metrics",
        interval: "30s",
        authorization: { type: "Bearer", credentials: { name: "edgeslice-router-admin", key: "token" } },
      },
    ]);
    expect(router?.spec.selector).toEqual({ matchLabels: { "app.kubernetes.io/name": "edgeslice-router" } });
    expect(routerPort).toBeDefined();
    expect(sync?.metadata.namespace).toBe("edgeslice");
    expect(sync?.spec.podMetricsEndpoints).toEqual([{ port: "metrics", path: "/metrics", interval: "30s" }]);
    expect(syncPort?.containerPort).toBe(9464);
  });
});

describe("deploy/overlays/east-router", () => {
  it("runs the base router in cluster east, preferring east's backends, behind a LoadBalancer", () => {
    const deployment = only<Deployment>(eastRouter, "Deployment");
    const syncCluster = envOf(only<Deployment>(eastSync, "Deployment")).get("CLUSTER_NAME")?.value;
    const service = only(eastRouter, "Service").spec as { type: string; externalTrafficPolicy: string };

    expect(envOf(deployment).get("ROUTER_CLUSTER")?.value).toBe(syncCluster);
    expect(service).toMatchObject({ type: "LoadBalancer", externalTrafficPolicy: "Local" });
    expect(only(eastRouter, "Namespace").metadata.name).toBe("edgeslice");
    expect(eastRouter.map((object) => object.kind)).not.toContain("Secret");
  });

  it("sets an example CLUSTER_GRANTS the router accepts, granting each cluster that has a sync overlay", () => {
    const grants = envOf(only<Deployment>(eastRouter, "Deployment")).get("CLUSTER_GRANTS")?.value;
    const parsed = parseRouterConfig({ CLUSTER_GRANTS: grants }).clusterGrants;
    expect([...(parsed?.keys() ?? [])]).toEqual(["east", "west"]);
    expect(parsed?.get("east")?.hosts).toContain("web.example.com");
  });
});
