import { Agent, request } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { sumRequests } from "../support/apiserver-metrics.js";
import { eventually } from "../support/eventually.js";
import { type FakeKube, type FakeKubeOptions, startFakeKube } from "./server.js";
import { openWatch } from "./watch-reader.js";

const ADMIN = { token: "admin-token", name: "admin", groups: ["system:masters"] };
const READER = { token: "reader-token", name: "system:serviceaccount:edge:reader", groups: [] };
const RBAC = "rbac.authorization.k8s.io/v1";
const GATEWAY = "gateway.networking.k8s.io/v1";
const ROUTES = `/apis/${GATEWAY}/namespaces/shop/httproutes`;

describe("the fake API server's identities, RBAC and metrics, as kube-apiserver's", () => {
  let kube: FakeKube;
  const noKeepAlive = new Agent({ pipelining: 0 });
  afterEach(async () => {
    await kube.close();
  });
  afterAll(() => noKeepAlive.close());

  const start = async (options: FakeKubeOptions = {}) => {
    kube = await startFakeKube({ users: [ADMIN, READER], ...options });
    return kube;
  };
  const send = async (
    path: string,
    token: string | undefined,
    method: "GET" | "POST" = "GET",
    body?: unknown,
  ) => {
    const response = await request(`${kube.url}${path}`, {
      method,
      // No keep-alive: a connection kept across stop() would be one the stop cut.
      dispatcher: noKeepAlive,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: await response.body.text() };
  };
  const statusOf = async (path: string, token = READER.token) => (await send(path, token)).status;
  const bind = (kind: "RoleBinding" | "ClusterRoleBinding", role: string, namespace?: string) =>
    kube.apply({
      apiVersion: RBAC,
      kind,
      metadata: { name: `${role}-${namespace ?? "all"}`, ...(namespace ? { namespace } : {}) },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [{ kind: "ServiceAccount", name: "reader", namespace: "edge" }],
    });
  const clusterRole = (name: string, rules: object[]) =>
    kube.apply({ apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules });

  it("answers no token as system:anonymous (403) and an unknown one with 401; the default token is cluster-admin", async () => {
    await start();
    const anonymous = await send("/api/v1/services", undefined);
    expect(anonymous.status).toBe(403);
    expect(JSON.parse(anonymous.body)).toMatchObject({
      reason: "Forbidden",
      message:
        'services is forbidden: User "system:anonymous" cannot list resource "services" in API group "" at the cluster scope',
    });
    expect(await statusOf("/readyz", "")).toBe(401);
    expect((await send("/readyz", undefined)).body).toBe("ok");
    expect(await statusOf("/api/v1/services", kube.token)).toBe(200);
  });

  it("grants a ClusterRoleBinding's rules everywhere and a RoleBinding's in its namespace only, names in the 403", async () => {
    await start();
    clusterRole("read-slices", [
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
    ]);
    bind("RoleBinding", "read-slices", "shop");
    expect(await statusOf("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices")).toBe(200);
    const elsewhere = await send("/apis/discovery.k8s.io/v1/namespaces/blog/endpointslices", READER.token);
    expect(JSON.parse(elsewhere.body).message).toBe(
      'endpointslices.discovery.k8s.io is forbidden: User "system:serviceaccount:edge:reader" cannot list resource "endpointslices" in API group "discovery.k8s.io" in the namespace "blog"',
    );
    expect(await statusOf("/apis/discovery.k8s.io/v1/endpointslices")).toBe(403);

    bind("ClusterRoleBinding", "read-slices");
    expect(await statusOf("/apis/discovery.k8s.io/v1/endpointslices")).toBe(200);
    expect(await statusOf("/apis/discovery.k8s.io/v1/namespaces/blog/endpointslices")).toBe(200);
    expect(await statusOf("/api/v1/namespaces/blog/services")).toBe(403);
  });

  it("matches a subresource only when the rule names it, and resourceNames only for requests that name one", async () => {
    await start();
    clusterRole("route-status", [
      { apiGroups: ["gateway.networking.k8s.io"], resources: ["httproutes/status"], verbs: ["update"] },
      {
        apiGroups: ["gateway.networking.k8s.io"],
        resources: ["httproutes"],
        verbs: ["get"],
        resourceNames: ["web"],
      },
    ]);
    bind("ClusterRoleBinding", "route-status");
    const may = async (verb: string, name?: string, subresource?: string) => {
      const spec = {
        resourceAttributes: {
          verb,
          group: "gateway.networking.k8s.io",
          resource: "httproutes",
          namespace: "shop",
          name,
          subresource,
        },
      };
      const review = await send(
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        READER.token,
        "POST",
        { spec },
      );
      expect(review.status).toBe(201);
      return (JSON.parse(review.body) as { status: { allowed: boolean } }).status.allowed;
    };
    expect(await may("update", "web", "status")).toBe(true);
    expect(await may("update", "web")).toBe(false);
    expect(await may("get", "web")).toBe(true);
    expect(await may("get", "api")).toBe(false);
    expect(await may("list")).toBe(false);
    // Authorised before the handler looks the resource up: only an allowed request learns what is not found.
    expect(await statusOf(`${ROUTES}/web`)).toBe(404);
    expect(await statusOf(`${ROUTES}/api`)).toBe(403);
    expect(await statusOf("/api/v1/pods", ADMIN.token)).toBe(404);
    expect(await statusOf("/api/v1/pods")).toBe(403);
  });

  it("refuses everyone but system:masters during its start-up window", async () => {
    await start({ forbiddenForMs: 60_000 });
    expect(await statusOf("/api/v1/services", kube.token)).toBe(403);
    expect(await statusOf("/api/v1/services", ADMIN.token)).toBe(200);
  });

  it("counts served requests in apiserver_request_total by verb, resource and scope, a WATCH once it ends, and from zero after a restart", async () => {
    await start();
    const count = async (verb: string, resource: string, scope?: string) =>
      sumRequests((await send("/metrics", ADMIN.token)).body, verb, resource, scope);
    await send("/apis/discovery.k8s.io/v1/endpointslices", ADMIN.token);
    await send("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices", ADMIN.token);
    expect(await count("LIST", "endpointslices")).toBe(2);
    expect(await count("LIST", "endpointslices", "namespace")).toBe(1);
    expect(await statusOf("/metrics")).toBe(403);

    const watch = await openWatch(`${kube.url}/api/v1/services?watch=true&timeoutSeconds=1`, ADMIN.token);
    expect(await count("WATCH", "services")).toBe(0);
    await watch.read(() => false, 3_000);
    await eventually(async () => (await count("WATCH", "services")) === 1, 3_000, "the ended watch counted");

    await kube.stop();
    await kube.restart();
    expect(await count("LIST", "endpointslices")).toBe(0);
  });

  it("answers a CRD kind that is not installed as kube-apiserver's handler chain ends: a plain-text 404, no Status", async () => {
    await start({ gatewayApi: false });
    const answer = await send(ROUTES, ADMIN.token);
    expect(answer).toEqual({ status: 404, body: "404 page not found\n" });
  });

  it("serves only the CRD kinds installed, and lists them alone in the group version's discovery", async () => {
    await start({ gatewayApi: false });
    expect(await statusOf(`/apis/${GATEWAY}`)).toBe(404);
    kube.installGatewayApi(["GatewayClass", "Gateway", "HTTPRoute", "ReferenceGrant"]);
    expect(await statusOf(ROUTES, ADMIN.token)).toBe(200);
    expect(await send("/apis/gateway.networking.k8s.io/v1/namespaces/shop/grpcroutes", ADMIN.token)).toEqual({
      status: 404,
      body: "404 page not found\n",
    });
    const discovery = JSON.parse((await send(`/apis/${GATEWAY}`, READER.token)).body) as {
      resources: { name: string }[];
    };
    expect(discovery.resources.map((resource) => resource.name).sort()).toEqual([
      "gatewayclasses",
      "gateways",
      "httproutes",
      "referencegrants",
    ]);
  });

  it("answers a CRD kind 503 with Retry-After: 5 for a moment after a restart, as kube-apiserver before all its paths are installed, then serves it", async () => {
    await start({ gatewayApi: false });
    kube.installGatewayApi();
    expect(await statusOf(ROUTES, ADMIN.token)).toBe(200);
    await kube.stop();
    await kube.restart({ gatewayApiLateForMs: 1_000 });
    expect(await statusOf("/api/v1/services", ADMIN.token)).toBe(200);
    const response = await request(`${kube.url}${ROUTES}`, {
      dispatcher: noKeepAlive,
      headers: { authorization: `Bearer ${ADMIN.token}` },
    });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(JSON.parse(await response.body.text())).toMatchObject({
      reason: "ServiceUnavailable",
      message: "the request has been made before all known HTTP paths have been installed, please try again",
      details: { retryAfterSeconds: 5 },
    });
    expect(await statusOf(`/apis/${GATEWAY}`)).toBe(503);
    await eventually(async () => (await statusOf(ROUTES, ADMIN.token)) === 200, 5_000, "served again");
  });

  it("labels each Namespace with its name and gives a new Gateway the status its CRD defaults to", async () => {
    await start();
    kube.apply({ kind: "Namespace", metadata: { name: "shop", labels: { team: "web" } } });
    expect(kube.get("Namespace", "", "shop")?.metadata.labels).toEqual({
      team: "web",
      "kubernetes.io/metadata.name": "shop",
    });
    kube.apply({
      kind: "Gateway",
      metadata: { name: "gw", namespace: "infra" },
      spec: { gatewayClassName: "x" },
    });
    const status = kube.get("Gateway", "infra", "gw")?.status as { conditions: object[] } | undefined;
    const conditions = status?.conditions;
    expect(conditions).toEqual([
      expect.objectContaining({ type: "Accepted", status: "Unknown", reason: "Pending" }),
      expect.objectContaining({ type: "Programmed", status: "Unknown", reason: "Pending" }),
    ]);
  });
});
