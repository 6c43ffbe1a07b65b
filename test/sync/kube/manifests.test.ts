import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cacheFromObjects, loadManifests, readManifestFolder } from "../../../sync/kube/manifests.js";
import { namespaceOf } from "../../../sync/translate/kube-objects.js";
import { recordingLogger } from "../../support/loggers.js";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "../../fixtures/manifests");

const ids = (objects: readonly { metadata: { name: string; namespace?: string | null } }[]) =>
  objects.map((object) => `${namespaceOf(object)}/${object.metadata.name}`);

const temporaryDirs: string[] = [];
async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "edgeslice-manifests-"));
  temporaryDirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}
afterEach(async () => {
  for (const dir of temporaryDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const service = (name: string, extra = "") =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: shop\n${extra}spec:\n  ports:\n    - port: 80\n`;

describe("loadManifests on the fixture folder", () => {
  it("loads Services and EndpointSlices from YAML, JSON and Lists in sorted file order", async () => {
    const loaded = await loadManifests(FIXTURE);
    expect(ids(loaded.services)).toEqual(["shop/web", "shop/dns", "shop/empty", "other/web"]);
    expect(ids(loaded.slices)).toEqual([
      "other/web-other-1",
      "shop/empty-1",
      "shop/dns-1",
      "shop/imported-dns-west",
      "shop/web-fqdn",
      "shop/web-v6",
      "shop/web-abc",
      "shop/web-custom",
    ]);
  });

  it("reports each malformed file and object with its file and path, and skips only those", async () => {
    const { problems } = await loadManifests(FIXTURE);
    expect(problems.map(({ file, path }) => ({ file, path }))).toEqual([
      { file: "bad-objects.yaml", path: "items[1]" },
      { file: "bad-objects.yaml", path: "items[2]" },
      { file: "broken.json", path: "(root)" },
      { file: "broken.yaml", path: "(root)" },
    ]);
    expect(problems[0]?.error).toContain("addressType");
    expect(problems[1]?.error).toContain("spec.ports.0.port");
    expect(problems[2]?.error).toMatch(/^not JSON/);
    expect(problems[3]?.error).toMatch(/^not YAML/);
  });

  it("gives the items of a typed list the list's kind, as the API server leaves it out", async () => {
    const { slices } = await loadManifests(FIXTURE);
    expect(slices.find((slice) => slice.metadata.name === "web-other-1")?.addressType).toBe("IPv4");
  });
});

describe("loadManifests", () => {
  it("names documents of a multi-document file and items inside them", async () => {
    const dir = await folder({
      "all.yaml": `${service("a")}---\nkind: List\nitems:\n  - kind: Service\n    metadata: {}\n---\n- not an object\n`,
    });
    const loaded = await loadManifests(dir);
    expect(ids(loaded.services)).toEqual(["shop/a"]);
    expect(loaded.problems.map(({ path, error }) => ({ path, error: error.split(":")[0] }))).toEqual([
      { path: "documents[1].items[0]", error: "invalid Service" },
      { path: "documents[2]", error: "not a Kubernetes object (expected a mapping with kind)" },
    ]);
  });

  it("keeps the other documents of a file when one document does not parse", async () => {
    const dir = await folder({ "mixed.yaml": `${service("a")}---\nkind: [unclosed\n---\n${service("b")}` });
    const loaded = await loadManifests(dir);
    expect(ids(loaded.services)).toEqual(["shop/a", "shop/b"]);
    expect(loaded.problems).toMatchObject([{ file: "mixed.yaml", path: "documents[1]" }]);
  });

  it("ignores unknown kinds and other files silently, and skips empty documents", async () => {
    const dir = await folder({
      "a.yml": `---\n${service("a")}---\n---\nkind: Deployment\nmetadata: { name: d }\n`,
      "b.json": JSON.stringify({ kind: "ConfigMap", metadata: { name: "c" } }),
      "empty.yaml": "",
      "README.md": "kind: Service",
    });
    const loaded = await loadManifests(dir);
    expect(ids(loaded.services)).toEqual(["shop/a"]);
    expect(loaded.problems).toEqual([]);
  });

  it("reads nested folders, sorted by path", async () => {
    const dir = await folder({
      "b/z.yaml": service("bz"),
      "a.yaml": service("a"),
      "b/a.json": "{}",
      "c.yaml": service("c"),
    });
    const loaded = await loadManifests(dir);
    expect(ids(loaded.services)).toEqual(["shop/a", "shop/bz", "shop/c"]);
    expect(loaded.problems).toEqual([{ file: "b/a.json", path: "(root)", error: "has no kind" }]);
  });

  it("keeps the first copy of a repeated object and reports the later one", async () => {
    const dir = await folder({ "1.yaml": service("a"), "2.yaml": service("a", "  labels: { copy: two }\n") });
    const loaded = await loadManifests(dir);
    expect(loaded.services).toHaveLength(1);
    expect(loaded.services[0]?.metadata.labels).toBeUndefined();
    expect(loaded.problems).toMatchObject([{ file: "2.yaml", path: "(root)" }]);
    expect(loaded.problems[0]?.error).toContain("first defined in 1.yaml");
  });

  it("reports an unsupported apiVersion instead of misreading it", async () => {
    const dir = await folder({
      "old.yaml":
        "apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: { name: s }\naddressType: IPv4\n",
    });
    const loaded = await loadManifests(dir);
    expect(loaded.slices).toEqual([]);
    expect(loaded.problems[0]?.error).toContain("discovery.k8s.io/v1beta1 is not supported");
  });

  it("reads GRPCRoutes written as v1 or v1alpha2, and refuses another version", async () => {
    const route = (name: string, version: string) =>
      `apiVersion: gateway.networking.k8s.io/${version}\nkind: GRPCRoute\nmetadata: { name: ${name}, namespace: shop }\nspec:\n  parentRefs: [{ name: gw }]\n`;
    const dir = await folder({
      "grpc.yaml": [route("a", "v1"), route("b", "v1alpha2"), route("c", "v1beta1")].join("---\n"),
    });
    const loaded = await loadManifests(dir);
    expect(ids(loaded.routeObjects.grpcRoutes)).toEqual(["shop/a", "shop/b"]);
    expect(loaded.problems.map((problem) => problem.error)).toEqual([
      expect.stringContaining("gateway.networking.k8s.io/v1beta1 is not supported"),
    ]);
  });

  it("fails when the folder cannot be read", async () => {
    await expect(loadManifests(join(tmpdir(), "edgeslice-no-such-folder-x9"))).rejects.toThrow(/ENOENT/);
  });
});

describe("cacheFromObjects", () => {
  it("answers the informer-cache questions from loaded manifests", async () => {
    const { services, slices } = await loadManifests(FIXTURE);
    const cache = cacheFromObjects(services, slices);
    expect(ids(cache.services())).toEqual(ids(services));
    expect(cache.service("shop", "web")?.metadata.annotations).toEqual({
      "edgeslice.io/hosts": "shop.example",
    });
    expect(cache.service("shop", "nope")).toBeUndefined();
    expect(cache.slicesOf("shop", "web").map((slice) => slice.metadata.name)).toEqual([
      "web-fqdn",
      "web-v6",
      "web-abc",
      "web-custom",
    ]);
    expect(cache.slicesOf("other", "web").map((slice) => slice.metadata.name)).toEqual(["web-other-1"]);
    expect(cache.slicesOf("shop", "nope")).toEqual([]);
  });
});

describe("readManifestFolder", () => {
  it("names each slice whose endpoints the translation drops, with the reasons", async () => {
    const slice = [
      "apiVersion: discovery.k8s.io/v1",
      "kind: EndpointSlice",
      "metadata:",
      "  name: web-abc",
      "  namespace: shop",
      "  labels: { kubernetes.io/service-name: web }",
      "addressType: IPv4",
      "ports: [{ name: http, port: 8080 }]",
      "endpoints:",
      "  - addresses: [999.1.1.1]",
      "  - addresses: [10.0.0.1]",
    ].join("\n");
    const dir = await folder({ "web.yaml": `${service("web")}---\n${slice}\n` });
    const { logger, entries } = recordingLogger();
    const loaded = await readManifestFolder(dir, logger);
    expect(loaded?.slices).toHaveLength(1);
    const dropped = entries.filter((entry) => entry.message === "dropping endpoints of an EndpointSlice");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]?.fields).toMatchObject({ namespace: "shop", name: "web-abc" });
    expect(String(dropped[0]?.fields.problems)).toContain("999.1.1.1");
  });
});
