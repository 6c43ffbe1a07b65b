import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { untilAllowed } from "../../support/envtest.js";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { renderDeploy } from "../support/deploy.js";
import { namespaceObject, serviceObject, sliceObject } from "../support/objects.js";
import {
  backendRef,
  gatewayClassObject,
  gatewayObject,
  httpRouteObject,
  INGRESS_CONTROLLER,
  ingressBackend,
  ingressClassObject,
  ingressObject,
  parentRef,
} from "../support/route-objects.js";
import { published } from "../support/store.js";
import { type SyncCli, startSyncCli, untilReady } from "../support/sync-cli.js";

const INGRESSES = "/apis/networking.k8s.io/v1/namespaces/shop/ingresses";
const MISSING_GROUP = "the API server does not serve this API group";
const STALE_ADDRESS = { ip: "192.0.2.99" };

/** Ingresses and their status, the Gateway API CRDs installed while the sync runs. */
export function describeIngressContract(plane: ControlPlaneKind): void {
  describeOn(plane, "Ingresses without the Gateway API installed, then with it", () => {
    let controlPlane: ControlPlane;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = uniquePrefix("plane-ingress");
    const cluster = "east";
    const syncs: SyncCli[] = [];
    let sync: SyncCli;

    const routeIds = async () => [...(await published(redis, prefix, cluster)).routes.keys()].sort();
    const loadBalancer = async (name: string) =>
      (
        JSON.parse((await controlPlane.get(`${INGRESSES}/${name}`)).body) as {
          status?: { loadBalancer?: unknown };
        }
      ).status?.loadBalancer;
    const start = async (env: Record<string, string> = {}) => {
      const started = await startSyncCli({
        controlPlane,
        cluster,
        prefix,
        podName: `east-${syncs.length}`,
        env: { MISSING_KIND_RETRY_MS: "300", LEADER_ELECTION: "false", ...env },
      });
      syncs.push(started);
      await untilReady(started);
      return started;
    };

    beforeAll(async () => {
      const deploy = await renderDeploy();
      controlPlane = await plane.start({ serviceAccount: deploy.serviceAccount });
      const services = ["web", "docs", "fallback", "theirs"];
      await controlPlane.apply([
        ...deploy.objects,
        namespaceObject("shop"),
        ...services.flatMap((name, index) => [
          serviceObject("shop", name, undefined),
          sliceObject("shop", name, [`10.3.0.${index + 1}`]),
        ]),
        // Created before any default IngressClass exists: the DefaultIngressClass admission plugin leaves its
        // ingressClassName unset, so the sync decides by the default-class annotation.
        ingressObject("shop", "implicit", {
          rules: [{ host: "implicit.shop.test", http: { paths: [pathTo("/", "Prefix", "web")] } }],
        }),
      ]);
      await controlPlane.apply([
        ingressClassObject("edgeslice", INGRESS_CONTROLLER, true),
        ingressClassObject("nginx", "k8s.io/ingress-nginx"),
        ingressObject("shop", "site", {
          ingressClassName: "edgeslice",
          defaultBackend: ingressBackend("fallback"),
          rules: [
            {
              host: "www.shop.test",
              http: {
                paths: [
                  pathTo("/", "Prefix", "web"),
                  pathTo("/docs/", "Prefix", "docs"),
                  pathTo("/exact", "Exact", "docs"),
                  pathTo("/legacy", "ImplementationSpecific", "web"),
                ],
              },
            },
          ],
        }),
        ingressObject("shop", "theirs", {
          ingressClassName: "nginx",
          rules: [{ host: "theirs.shop.test", http: { paths: [pathTo("/", "Prefix", "theirs")] } }],
        }),
      ]);
      // An address some earlier controller left: ours is cleared (nothing configured), theirs is kept.
      for (const name of ["site", "theirs"]) {
        await controlPlane.writeStatus("ingress", "shop", name, {
          loadBalancer: { ingress: [STALE_ADDRESS] },
        });
      }
      await untilAllowed(controlPlane, "/apis/networking.k8s.io/v1/ingresses");
      sync = await start();
    }, 60_000);
    afterAll(async () => {
      await Promise.all(syncs.map((item) => item.kill()));
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    it("publishes our Ingresses (Prefix, Exact, ImplementationSpecific, defaultBackend, the default class) and ignores another class's", async () => {
      const expected = [
        "ingress:shop/implicit#host:implicit.shop.test",
        "ingress:shop/site#default-backend",
        "ingress:shop/site#host:www.shop.test",
      ];
      await pollUntil(async () => (await routeIds()).join() === expected.join(), {
        timeoutMs: 15_000,
        describe: () => `published routes are not ${expected.join(", ")}`,
      });
      const routes = (await published(redis, prefix, cluster)).routes;
      const site = routes.get("ingress:shop/site#host:www.shop.test");
      expect(site).toMatchObject({ source: "ingress", hostnames: ["www.shop.test"], wildcard: "one-label" });
      expect(site?.rules.map((rule) => [rule.matches[0]?.path, rule.backends])).toEqual([
        [{ type: "PathPrefix", value: "/" }, [{ service: "shop/web", port: 80, weight: 1 }]],
        [{ type: "PathPrefix", value: "/docs" }, [{ service: "shop/docs", port: 80, weight: 1 }]],
        [{ type: "Exact", value: "/exact" }, [{ service: "shop/docs", port: 80, weight: 1 }]],
        // ImplementationSpecific is a Prefix here (sync/translate/ingress/paths.ts).
        [{ type: "PathPrefix", value: "/legacy" }, [{ service: "shop/web", port: 80, weight: 1 }]],
      ]);
      expect(routes.get("ingress:shop/site#default-backend")).toMatchObject({
        hostnames: [],
        fallback: true,
        rules: [{ backends: [{ service: "shop/fallback", port: 80, weight: 1 }] }],
      });
      const services = (await published(redis, prefix, cluster)).services;
      expect([...services.keys()].sort()).toEqual(["shop/docs", "shop/fallback", "shop/web"]);
    });

    it("leaves status.loadBalancer of our Ingresses empty when INGRESS_STATUS_ADDRESSES is unset, another class's untouched", async () => {
      await pollUntil(async () => JSON.stringify((await loadBalancer("site")) ?? {}) === "{}", {
        timeoutMs: 10_000,
        describe: () => "the stale address on shop/site was never cleared",
      });
      expect(await loadBalancer("theirs")).toEqual({ ingress: [STALE_ADDRESS] });
    });

    it("logs the missing Gateway API once, keeps retrying, and reads HTTPRoutes once the CRDs are installed", async () => {
      // Several retries (300 ms apart) have run by now; still one line for the whole API group.
      await pollUntil(async () => Date.now() - (sync.logged(MISSING_GROUP)[0]?.at ?? Date.now()) > 1_500, {
        timeoutMs: 10_000,
        describe: () => "the missing Gateway API was never logged",
      });
      expect(sync.logged(MISSING_GROUP).map((line) => line.fields.group)).toEqual([
        "gateway.networking.k8s.io/v1",
      ]);
      expect((await sync.readyz()).status).toBe(200);
      if (!plane.gatewayApi) return;

      await controlPlane.installGatewayApi();
      await controlPlane.apply([
        gatewayClassObject("edgeslice"),
        namespaceObject("edge"),
        // Routes from namespaces picked by label: the API server's own kubernetes.io/metadata.name label,
        // read from the sync's Namespace reflector.
        gatewayObject(
          "edge",
          "gw",
          "edgeslice",
          { web: "*.shop.test" },
          {
            from: "Selector",
            selector: { matchLabels: { "kubernetes.io/metadata.name": "shop" } },
          },
        ),
        httpRouteObject("shop", "api", {
          parentRefs: [parentRef("edge", "gw")],
          hostnames: ["api.shop.test"],
          rules: [{ backendRefs: [backendRef("docs")] }],
        }),
      ]);
      await pollUntil(async () => (await routeIds()).includes("httproute:shop/api"), {
        timeoutMs: 10_000,
        describe: () => "httproute:shop/api was not published after the CRDs were installed",
      });
      // Each kind of the group retries on its own timer: the route may be out before the last kind is served.
      await sync.waitForLog((line) => line.msg.includes("serves this API group now"), 10_000);
      expect(sync.logged("serves this API group now")).toHaveLength(1);
      expect(sync.logged(MISSING_GROUP)).toHaveLength(1);
      expect(sync.logged("not authorised")).toEqual([]);
    });

    it("writes INGRESS_STATUS_ADDRESSES into our Ingresses' status.loadBalancer", async () => {
      await sync.stop();
      const restarted = await start({
        INGRESS_STATUS_ADDRESSES: "192.0.2.50,edge.shop.test",
        RESYNC_INTERVAL_MS: "500",
      });
      const want = { ingress: [{ ip: "192.0.2.50" }, { hostname: "edge.shop.test" }] };
      await pollUntil(async () => JSON.stringify(await loadBalancer("site")) === JSON.stringify(want), {
        timeoutMs: 10_000,
        describe: () => "shop/site never got the configured addresses",
      });
      expect(await loadBalancer("implicit")).toEqual(want);
      expect(await loadBalancer("theirs")).toEqual({ ingress: [STALE_ADDRESS] });

      // Written once: the API server keeps it as sent, so resyncs find nothing to change.
      const version = async () =>
        (
          JSON.parse((await controlPlane.get(`${INGRESSES}/site`)).body) as {
            metadata: { resourceVersion: string };
          }
        ).metadata.resourceVersion;
      const before = await version();
      const resyncs = (await restarted.metric("edgeslice_sync_full_resyncs_total")) ?? 0;
      await pollUntil(
        async () => ((await restarted.metric("edgeslice_sync_full_resyncs_total")) ?? 0) >= resyncs + 2,
        {
          timeoutMs: 10_000,
          describe: () => "the sync did not resync twice",
        },
      );
      expect(await version()).toBe(before);
    });

    it("removes the records of a deleted Ingress and a deleted HTTPRoute, and the port records only they used", async () => {
      await controlPlane.remove("ingress", "shop", "site");
      if (plane.gatewayApi) await controlPlane.remove("httproute", "shop", "api");
      const left = ["ingress:shop/implicit#host:implicit.shop.test"];
      await pollUntil(async () => (await routeIds()).join() === left.join(), {
        timeoutMs: 10_000,
        describe: () => `published routes are not only ${left.join(", ")}`,
      });
      // shop/web serves the implicit Ingress; docs and fallback served only the deleted objects.
      await pollUntil(
        async () => [...(await published(redis, prefix, cluster)).services.keys()].join() === "shop/web",
        { timeoutMs: 10_000, describe: () => "the Service records are not only shop/web" },
      );
    });
  });
}
function pathTo(path: string, pathType: string, service: string): object {
  return { path, pathType, backend: ingressBackend(service) };
}
