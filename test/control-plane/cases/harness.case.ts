import { afterAll, beforeAll, expect, it } from "vitest";
import { untilAllowed } from "../../support/envtest.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { namespaceObject, serviceObject } from "../support/objects.js";
import { ingressBackend, ingressObject } from "../support/route-objects.js";

interface Page {
  metadata: { resourceVersion: string; continue?: string };
  items: { metadata: { name: string } }[];
}

/** An object as read back, to write again. */
interface Written {
  metadata: { resourceVersion: string };
  spec?: Record<string, unknown>;
}

/**
 * What the other cases rely on the control plane for: identities and RBAC, restarts, compaction and 410s,
 * paging, optimistic concurrency, metrics.
 */
export function describeHarnessContract(plane: ControlPlaneKind): void {
  describeOn(plane, "the control plane the sync's tests drive", () => {
    let controlPlane: ControlPlane;
    beforeAll(async () => {
      controlPlane = await plane.start({ watchCache: false });
    });
    afterAll(async () => {
      await controlPlane?.close();
    });

    it("serves the admin, and answers the sync's ServiceAccount with a 403 Status naming it until RBAC allows it", async () => {
      expect((await controlPlane.get("/api/v1/namespaces/default", "admin")).status).toBe(200);
      const refused = await controlPlane.get("/api/v1/services", "sync");
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({
        kind: "Status",
        reason: "Forbidden",
        code: 403,
        message: expect.stringContaining(controlPlane.syncUser),
      });

      // Not the built-in `view` role: it is aggregated by kube-controller-manager, which envtest does not run.
      const { name, namespace } = controlPlane.serviceAccount;
      await controlPlane.apply(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: harness-list-services }
rules: [{ apiGroups: [""], resources: [services], verbs: [list] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: harness-list-services }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: harness-list-services }
subjects: [{ kind: ServiceAccount, name: ${name}, namespace: ${namespace} }]
`);
      await untilAllowed(controlPlane, "/api/v1/services");
      await controlPlane.remove("clusterrolebinding", undefined, "harness-list-services");
      await controlPlane.remove("clusterrole", undefined, "harness-list-services");
    });

    it("restarts the apiserver alone on the same URL, with the objects etcd kept", async () => {
      await controlPlane.apply([namespaceObject("restart"), serviceObject("restart", "kept", "kept.test")]);
      await controlPlane.stopApiserver();
      expect(controlPlane.apiserverRunning).toBe(false);
      await expect(controlPlane.get("/readyz")).rejects.toThrow();

      await controlPlane.startApiserver();
      const kept = await controlPlane.get("/api/v1/namespaces/restart/services/kept");
      expect(kept.status).toBe(200);
    });

    it("makes a watch resumed from before an etcd compaction end with a 410 Gone (no watch cache)", async () => {
      await controlPlane.apply(namespaceObject("compact"));
      const before = JSON.parse((await controlPlane.get("/api/v1/namespaces/compact/services")).body) as {
        metadata: { resourceVersion: string };
      };
      await controlPlane.apply(serviceObject("compact", "later", "later.test"));
      const revision = await controlPlane.compact();
      expect(revision).toBeGreaterThan(Number(before.metadata.resourceVersion));

      const path = `/api/v1/namespaces/compact/services?watch=true&timeoutSeconds=5&resourceVersion=${before.metadata.resourceVersion}`;
      const watched = await controlPlane.get(path);
      // The apiserver answers 200 and puts the 410 in an ERROR event of the stream, as for an expired cache.
      expect(watched.status).toBe(200);
      const events = watched.body
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string; object: { code?: number; reason?: string } });
      expect(events).toEqual([
        { type: "ERROR", object: expect.objectContaining({ kind: "Status", code: 410, reason: "Expired" }) },
      ]);
    });

    it("pages a LIST with limit and continue, every page at the first page's resourceVersion", async () => {
      const names = ["a", "b", "c", "d", "e"];
      await controlPlane.apply([
        namespaceObject("paged"),
        ...names.map((name) => serviceObject("paged", name, undefined)),
      ]);
      const pages: Page[] = [];
      let token: string | undefined;
      do {
        const query = `limit=2${token === undefined ? "" : `&continue=${encodeURIComponent(token)}`}`;
        const page = JSON.parse(
          (await controlPlane.get(`/api/v1/namespaces/paged/services?${query}`)).body,
        ) as Page;
        pages.push(page);
        token = page.metadata.continue || undefined;
        // A change between pages: the list stays the one at the first page's resourceVersion.
        if (pages.length === 1) await controlPlane.apply(serviceObject("paged", "f", undefined));
      } while (token !== undefined);

      expect(pages.map((page) => page.items.length)).toEqual([2, 2, 1]);
      expect(pages.flatMap((page) => page.items.map((item) => item.metadata.name)).sort()).toEqual(names);
      expect(new Set(pages.map((page) => page.metadata.resourceVersion)).size).toBe(1);
    });

    it("answers a continue token from before a compaction with 410 Expired", async () => {
      await controlPlane.apply([
        namespaceObject("expired"),
        ...["a", "b"].map((name) => serviceObject("expired", name, undefined)),
      ]);
      const first = JSON.parse(
        (await controlPlane.get("/api/v1/namespaces/expired/services?limit=1")).body,
      ) as Page;
      await controlPlane.apply(serviceObject("expired", "c", undefined));
      await controlPlane.compact();
      const token = encodeURIComponent(first.metadata.continue ?? "");
      const expired = await controlPlane.get(`/api/v1/namespaces/expired/services?limit=1&continue=${token}`);
      expect(expired.status).toBe(410);
      expect(JSON.parse(expired.body)).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    });

    it("answers a write carrying a stale resourceVersion with 409 Conflict, on an object and on its status", async () => {
      const leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
      await controlPlane.apply({
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "contended", namespace: "default" },
        spec: { holderIdentity: "a", leaseDurationSeconds: 10 },
      });
      const lease = JSON.parse((await controlPlane.get(`${leases}/contended`)).body) as Written;
      const taken = { ...lease, spec: { ...lease.spec, holderIdentity: "b" } };
      expect((await controlPlane.send("PUT", `${leases}/contended`, { body: taken })).status).toBe(200);
      const stale = await controlPlane.send("PUT", `${leases}/contended`, { body: taken });
      expect([stale.status, JSON.parse(stale.body).reason]).toEqual([409, "Conflict"]);

      const ingresses = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
      await controlPlane.apply(ingressObject("default", "site", { defaultBackend: ingressBackend("web") }));
      const site = JSON.parse((await controlPlane.get(`${ingresses}/site`)).body) as Written;
      const addressed = { ...site, status: { loadBalancer: { ingress: [{ ip: "192.0.2.7" }] } } };
      const first = await controlPlane.send("PUT", `${ingresses}/site/status`, { body: addressed });
      expect(first.status).toBe(200);
      const again = await controlPlane.send("PUT", `${ingresses}/site/status`, { body: addressed });
      expect([again.status, JSON.parse(again.body).reason]).toEqual([409, "Conflict"]);
      expect(JSON.parse((await controlPlane.get(`${ingresses}/site`)).body).status).toEqual(addressed.status);
    });

    it("counts requests by verb and resource in the apiserver's /metrics", async () => {
      const before = await controlPlane.requestCount("LIST", "endpointslices");
      await controlPlane.get("/apis/discovery.k8s.io/v1/endpointslices");
      await controlPlane.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices");
      expect(await controlPlane.requestCount("LIST", "endpointslices")).toBe(before + 2);
    });
  });
}
