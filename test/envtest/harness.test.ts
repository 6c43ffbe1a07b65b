import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENVTEST_AVAILABLE,
  ENVTEST_SKIP_LINE,
  type Envtest,
  startEnvtest,
  untilAllowed,
} from "../support/envtest.js";
import { namespaceObject, serviceObject } from "./support/objects.js";

// This file alone says why the envtest folder skips, so a run without assets prints one line.
if (!ENVTEST_AVAILABLE) console.warn(ENVTEST_SKIP_LINE);

describe.skipIf(!ENVTEST_AVAILABLE)("the envtest harness (real etcd and kube-apiserver)", () => {
  let envtest: Envtest;
  beforeAll(async () => {
    envtest = await startEnvtest({ watchCache: false });
  });
  afterAll(async () => {
    await envtest?.close();
  });

  it("serves the admin, and answers the sync's ServiceAccount with a 403 Status naming it until RBAC allows it", async () => {
    expect((await envtest.get("/api/v1/namespaces/default", "admin")).status).toBe(200);
    const refused = await envtest.get("/api/v1/services", "sync");
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({
      kind: "Status",
      reason: "Forbidden",
      code: 403,
      message: expect.stringContaining(envtest.syncUser),
    });

    // Not the built-in `view` role: it is aggregated by kube-controller-manager, which envtest does not run.
    await envtest.apply(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: harness-list-services }
rules: [{ apiGroups: [""], resources: [services], verbs: [list] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: harness-list-services }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: harness-list-services }
subjects: [{ kind: ServiceAccount, name: ${envtest.serviceAccount.name}, namespace: ${envtest.serviceAccount.namespace} }]
`);
    await untilAllowed(envtest, "/api/v1/services");
    await envtest.kubectl(["delete", "clusterrolebinding,clusterrole", "harness-list-services"]);
  });

  it("restarts the apiserver alone on the same URL, with the objects etcd kept", async () => {
    await envtest.apply([namespaceObject("restart"), serviceObject("restart", "kept", "kept.test")]);
    await envtest.stopApiserver({ signal: "SIGKILL" });
    expect(envtest.apiserverRunning).toBe(false);
    await expect(envtest.get("/readyz")).rejects.toThrow();

    await envtest.startApiserver();
    const kept = await envtest.get("/api/v1/namespaces/restart/services/kept");
    expect(kept.status).toBe(200);
  });

  it("makes a watch resumed from before an etcd compaction end with a 410 Gone (no watch cache)", async () => {
    await envtest.apply(namespaceObject("compact"));
    const before = JSON.parse((await envtest.get("/api/v1/namespaces/compact/services")).body) as {
      metadata: { resourceVersion: string };
    };
    await envtest.apply(serviceObject("compact", "later", "later.test"));
    const revision = await envtest.compact();
    expect(revision).toBeGreaterThan(Number(before.metadata.resourceVersion));

    const path = `/api/v1/namespaces/compact/services?watch=true&timeoutSeconds=5&resourceVersion=${before.metadata.resourceVersion}`;
    const watched = await envtest.get(path);
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

  it("counts requests by verb and resource in the apiserver's /metrics", async () => {
    const before = await envtest.requestCount("LIST", "endpointslices");
    await envtest.get("/apis/discovery.k8s.io/v1/endpointslices");
    await envtest.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices");
    expect(await envtest.requestCount("LIST", "endpointslices")).toBe(before + 2);
  });
});
