import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { untilAllowed } from "../../support/envtest.js";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { type DeployManifests, renderDeploy } from "../support/deploy.js";
import { exposedWithSlice, namespaceObject } from "../support/objects.js";
import { published } from "../support/store.js";
import { type SyncCli, startSyncCli, untilLeader, untilReady } from "../support/sync-cli.js";

type Check = readonly [verb: string, resource: string, subresource?: string];
const label = ([verb, resource, subresource]: Check) =>
  `${verb} ${resource}${subresource === undefined ? "" : `/${subresource}`}`;
const gateway = (kind: string) => `${kind}.gateway.networking.k8s.io`;

/** deploy/'s RBAC applied as an operator applies it, then used with the sync's own token. */
export function describeRbacContract(plane: ControlPlaneKind): void {
  describeOn(plane, "the RBAC of deploy/, used with the sync's own token", () => {
    let controlPlane: ControlPlane;
    let deploy: DeployManifests;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefixes: string[] = [];
    let syncs: SyncCli[] = [];

    beforeAll(async () => {
      deploy = await renderDeploy();
      controlPlane = await plane.start({ serviceAccount: deploy.serviceAccount });
      await controlPlane.apply(deploy.objects);
      await controlPlane.apply([
        namespaceObject("shop"),
        namespaceObject("blog"),
        ...exposedWithSlice("shop", "web", ["10.1.0.1", "10.1.0.2"]),
        ...exposedWithSlice("blog", "posts", ["192.0.2.10"]),
      ]);
      await untilAllowed(controlPlane, "/apis/discovery.k8s.io/v1/endpointslices");
      await untilAllowed(controlPlane, "/api/v1/services");
    });
    afterEach(async () => {
      await Promise.all(syncs.map((sync) => sync.kill()));
      syncs = [];
    });
    afterAll(async () => {
      for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    const start = async (cluster: string) => {
      const prefix = uniquePrefix("plane-rbac");
      prefixes.push(prefix);
      const sync = await startSyncCli({ controlPlane, cluster, prefix, podName: `${cluster}-0` });
      syncs.push(sync);
      return { sync, prefix };
    };
    /** A SelfSubjectAccessReview as the sync: `resource` as plural.group, e.g. httproutes.gateway.networking.k8s.io. */
    const can = async (
      verb: string,
      resource: string,
      namespace?: string,
      subresource?: string,
      name?: string,
    ) => {
      const [plural = resource, ...group] = resource.split(".");
      const question = { verb, group: group.join("."), resource: plural, namespace, subresource, name };
      return (await controlPlane.may("sync", question)) ? "yes" : "no";
    };
    const answers = (checks: readonly Check[]) =>
      Promise.all(
        checks.map(async (check) => `${label(check)}: ${await can(check[0], check[1], "shop", check[2])}`),
      );

    it("lets the sync list and watch every namespace, hold its Lease and publish, with no refusal logged", async () => {
      const { sync, prefix } = await start("east");
      await untilReady(sync);
      await untilLeader(sync, 1);
      await pollUntil(async () => (await published(redis, prefix, "east")).services.size === 2, {
        timeoutMs: 15_000,
        describe: () => "shop/web and blog/posts were not both published",
      });
      const view = await published(redis, prefix, "east");
      expect([...view.services.keys()].sort()).toEqual(["blog/posts", "shop/web"]);
      expect(view.stale).toBe(false);

      const lease = await controlPlane.get(
        `/apis/coordination.k8s.io/v1/namespaces/${deploy.serviceAccount.namespace}/leases/edgeslice-sync-east`,
      );
      expect(JSON.parse(lease.body)).toMatchObject({ spec: { holderIdentity: "east-0" } });
      expect(sync.logged("not authorised")).toEqual([]);
      expect(sync.logged("lease request failed")).toEqual([]);
    });

    it("grants the sync reads of what routes are made of, updates of their status subresource, and nothing beyond (its own namespace's Leases aside)", async () => {
      const refused = [
        "/api/v1/endpoints",
        "/api/v1/pods",
        "/api/v1/namespaces/shop/serviceaccounts",
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
      ];
      for (const path of refused)
        expect([path, (await controlPlane.get(path, "sync")).status]).toEqual([path, 403]);
      const allowed = [
        "/api/v1/namespaces",
        // TLS Secrets for HTTPS listeners' certificateRefs (the sync asks with a type field selector).
        "/api/v1/secrets?fieldSelector=type%3Dkubernetes.io%2Ftls",
        // BackendTLSPolicies' CA bundles (the sync keeps `ca.crt` only).
        "/api/v1/namespaces/shop/configmaps",
        "/apis/networking.k8s.io/v1/ingresses",
        "/apis/networking.k8s.io/v1/ingressclasses",
      ];
      for (const path of allowed)
        expect([path, (await controlPlane.get(path, "sync")).status]).toEqual([path, 200]);
      const granted = [
        ["update", gateway("httproutes"), "status"],
        ["update", gateway("gateways"), "status"],
        ["update", gateway("gatewayclasses"), "status"],
        ["update", "ingresses.networking.k8s.io", "status"],
        ["update", gateway("backendtlspolicies"), "status"],
        ["list", gateway("referencegrants")],
        ["watch", "namespaces"],
      ] as const;
      expect(await answers(granted)).toEqual(granted.map((check) => `${label(check)}: yes`));
      const denied = [
        ["create", "services"],
        ["delete", "endpointslices.discovery.k8s.io"],
        ["update", "secrets"],
        ["create", "secrets"],
        ["update", gateway("httproutes")],
        ["patch", gateway("httproutes"), "status"],
        ["create", gateway("httproutes")],
        ["delete", gateway("gateways")],
        ["update", gateway("gatewayclasses")],
        ["update", gateway("referencegrants"), "status"],
        ["update", "ingresses.networking.k8s.io"],
        ["update", "ingressclasses.networking.k8s.io"],
        ["update", "namespaces"],
        ["update", "services", "status"],
      ] as const;
      expect(await answers(denied)).toEqual(denied.map((check) => `${label(check)}: no`));
      expect(await can("delete", "leases.coordination.k8s.io", deploy.serviceAccount.namespace)).toBe("no");
      expect(await can("update", "leases.coordination.k8s.io", deploy.serviceAccount.namespace)).toBe("yes");
    });

    it("lets the sync read what it translates in every namespace, update one named route's status but not its spec, and hold its Lease only at home", async () => {
      const reads = ["get", "list", "watch"].flatMap((verb) =>
        ["services", "endpointslices.discovery.k8s.io"].map((resource) => [verb, resource] as const),
      );
      const lists = [
        "namespaces",
        ...["gatewayclasses", "gateways", "httproutes", "referencegrants"].map(gateway),
        "ingressclasses.networking.k8s.io",
        "ingresses.networking.k8s.io",
      ].map((resource) => ["list", resource] as const);
      const everywhere = await Promise.all(
        [...reads, ...lists].map(async (check) => `${label(check)}: ${await can(check[0], check[1])}`),
      );
      expect(everywhere).toEqual([...reads, ...lists].map((check) => `${label(check)}: yes`));

      const named = [
        [gateway("httproutes"), "web"],
        [gateway("gateways"), "edge"],
        ["ingresses.networking.k8s.io", "site"],
      ] as const;
      for (const [resource, name] of named) {
        expect([resource, await can("update", resource, "shop", "status", name)]).toEqual([resource, "yes"]);
        expect([resource, await can("update", resource, "shop", undefined, name)]).toEqual([resource, "no"]);
      }
      const home = deploy.serviceAccount.namespace;
      for (const verb of ["get", "create", "update"]) {
        expect([verb, await can(verb, "leases.coordination.k8s.io", home)]).toEqual([verb, "yes"]);
      }
      expect(await can("create", "leases.coordination.k8s.io", "default")).toBe("no");
      expect(await can("update", "services", home)).toBe("no");
      for (const resource of ["endpoints", "pods"]) {
        expect([resource, await can("list", resource)]).toEqual([resource, "no"]);
      }
      expect(await can("watch", "secrets")).toBe("yes");
    });

    it("keeps the sync ready and publishing, and says so once, when the secrets rule is missing (an RBAC from before HTTPS)", async () => {
      const rules = (deploy.readRules as { resources?: string[] }[]).filter(
        (rule) => !rule.resources?.includes("secrets"),
      );
      await controlPlane.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "edgeslice-sync" },
        rules,
      });
      await pollUntil(async () => (await controlPlane.get("/api/v1/secrets", "sync")).status === 403, {
        timeoutMs: 10_000,
        describe: () => "the narrowed ClusterRole never took effect",
      });
      try {
        const { sync, prefix } = await start("south");
        await untilReady(sync);
        await pollUntil(async () => (await published(redis, prefix, "south")).services.size === 2, {
          timeoutMs: 15_000,
          describe: () => "shop/web and blog/posts were not both published",
        });
        await sync.waitForLog((line) => line.msg.includes("Secrets are not readable"));
        expect(sync.logged("Secrets are not readable")).toHaveLength(1);
      } finally {
        await controlPlane.apply(deploy.objects.filter((object) => object.kind === "ClusterRole"));
      }
    });

    it("keeps the sync unready and logging 'not authorised' when the endpointslices rule is missing (the upgrade note of docs/deploy.md)", async () => {
      const rules = (deploy.readRules as { resources?: string[] }[]).filter(
        (rule) => !rule.resources?.includes("endpointslices"),
      );
      await controlPlane.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "edgeslice-sync" },
        rules,
      });
      await pollUntil(
        async () =>
          (await controlPlane.get("/apis/discovery.k8s.io/v1/endpointslices", "sync")).status === 403,
        { timeoutMs: 10_000, describe: () => "the narrowed ClusterRole never took effect" },
      );
      try {
        const { sync, prefix } = await start("west");
        await sync.waitForLog((line) => line.msg.includes("not authorised") && line.level === "error");
        const readyz = await sync.readyz();
        expect(readyz.status).toBe(503);
        expect(JSON.parse(readyz.body)).toMatchObject({ ready: false, synced: false });
        expect((await published(redis, prefix, "west")).registered).toBe(false);
      } finally {
        await controlPlane.apply(deploy.objects.filter((object) => object.kind === "ClusterRole"));
      }
    });
  });
}
