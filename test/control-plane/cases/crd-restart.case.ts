import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { untilAllowed } from "../../support/envtest.js";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import {
  type ControlPlane,
  type ControlPlaneKind,
  describeOn,
  requiringGatewayApi,
} from "../control-plane.js";
import { renderDeploy } from "../support/deploy.js";
import { namespaceObject, serviceObject, sliceObject } from "../support/objects.js";
import {
  backendRef,
  gatewayClassObject,
  gatewayObject,
  httpRouteObject,
  parentRef,
} from "../support/route-objects.js";
import { published } from "../support/store.js";
import { type SyncCli, startSyncCli, untilLeader, untilReady } from "../support/sync-cli.js";

const ROUTE_ID = "httproute:shop/web";
const MISSING_GROUP = "the API server does not serve this API group";

function webRoute(hostname: string): object {
  return httpRouteObject("shop", "web", {
    parentRefs: [parentRef("infra", "gw")],
    hostnames: [hostname],
    rules: [{ backendRefs: [backendRef("web")] }],
  });
}

/**
 * A restarting apiserver answers 403 for about a second, then serves the kinds of CRDs a moment after the
 * built-in ones (404 meanwhile): the sync keeps what it read of a kind it was served, rather than reading the
 * Gateway API as uninstalled and unpublishing every HTTPRoute.
 */
export function describeCrdRestartContract(plane: ControlPlaneKind): void {
  const runnable = requiringGatewayApi(plane);
  describeOn(runnable, "the Gateway API's kinds through an apiserver restart", () => {
    let controlPlane: ControlPlane;
    let sync: SyncCli | undefined;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = uniquePrefix("plane-crd-restart");

    beforeAll(async () => {
      const deploy = await renderDeploy();
      controlPlane = await plane.start({ serviceAccount: deploy.serviceAccount });
      await Promise.all([
        controlPlane.apply([
          ...deploy.objects,
          namespaceObject("infra"),
          namespaceObject("shop"),
          serviceObject("shop", "web", undefined),
          sliceObject("shop", "web", ["10.7.0.1"]),
        ]),
        controlPlane.installGatewayApi(),
      ]);
      await controlPlane.apply([
        gatewayClassObject("edgeslice"),
        gatewayObject("infra", "gw", "edgeslice", { web: "*.shop.test" }),
        webRoute("www.shop.test"),
      ]);
      await untilAllowed(controlPlane, "/apis/gateway.networking.k8s.io/v1/httproutes");
    }, 60_000);
    afterAll(async () => {
      await sync?.kill();
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    const hostnames = async () => (await published(redis, prefix, "east")).routes.get(ROUTE_ID)?.hostnames;

    it("keeps an HTTPRoute published through the restart, never reads the Gateway API as missing, and follows the route after", async () => {
      sync = await startSyncCli({ controlPlane, cluster: "east", prefix, podName: "east-0" });
      await untilReady(sync);
      await untilLeader(sync, 1);
      await pollUntil(async () => (await hostnames())?.join() === "www.shop.test", {
        timeoutMs: 15_000,
        describe: () => `${ROUTE_ID} was not published`,
      });
      const samples: (string | undefined)[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          samples.push((await hostnames())?.join());
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();

      await controlPlane.stopApiserver();
      await controlPlane.startApiserver();
      // Published only once the HTTPRoutes are watched again: the restart is behind the sync.
      await controlPlane.apply(webRoute("shop.shop.test"));
      await pollUntil(async () => (await hostnames())?.join() === "shop.shop.test", {
        timeoutMs: 30_000,
        describe: () =>
          `the route's change after the restart was not published: ${JSON.stringify(sync?.logs.slice(-10))}`,
      });
      sampling = false;
      await sampler;

      expect(samples.filter((sample) => sample === undefined)).toEqual([]);
      expect(sync.logged(MISSING_GROUP)).toEqual([]);
      expect(sync.logged("not authorised")).toEqual([]);
      expect(sync.logs.filter((line) => line.level === "error")).toEqual([]);
    }, 90_000);
  });
}
