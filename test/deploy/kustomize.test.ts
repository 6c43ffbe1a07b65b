import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  container,
  DEPLOY,
  type Deployment,
  type KubeObject,
  kustomizations,
  type Labels,
  ofKind,
  render,
  selects,
} from "./support/render.js";

const FOLDERS = kustomizations();
const rendered = new Map<string, KubeObject[]>();
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "GatewayClass",
  "IngressClass",
]);
/** The folders that run something: the two bases and the overlays built on them (not the classes). */
const RUNNING = FOLDERS.filter((folder) => !folder.endsWith("-class"));
/** The entry each Deployment runs: the files `npm run build` writes (test/build). */
const ENTRY_OF: Readonly<Record<string, string>> = {
  "edgeslice-sync": "dist/sync.js",
  "edgeslice-router": "dist/router.js",
};

beforeAll(async () => {
  for (const folder of FOLDERS) rendered.set(folder, await render(folder));
});

function objectsOf(folder: string): KubeObject[] {
  const objects = rendered.get(folder);
  if (!objects) throw new Error(`${folder} was not rendered`);
  return objects;
}

function imageOfComponent(): string {
  const component = parse(readFileSync(join(DEPLOY, "components/image/kustomization.yaml"), "utf8")) as {
    images: { name: string; newName: string; newTag: string }[];
  };
  const [image] = component.images;
  return `${image?.newName}:${image?.newTag}`;
}

describe("deploy/ kustomizations", () => {
  it("are the two classes, the two bases and an overlay per cluster plus a router placement", () => {
    expect(FOLDERS).toEqual([
      "deploy/gateway-class",
      "deploy/ingress-class",
      "deploy/overlays/east",
      "deploy/overlays/east-router",
      "deploy/overlays/west",
      "deploy/router",
      "deploy/sync",
    ]);
  });

  it.each(FOLDERS)("%s renders objects that all live in the edgeslice namespace", (folder) => {
    const objects = objectsOf(folder);

    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) {
      if (CLUSTER_SCOPED.has(object.kind)) expect(object.metadata.namespace, object.kind).toBeUndefined();
      else expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe("edgeslice");
    }
  });

  it.each(RUNNING)(
    "%s runs the one image with node dist/<entry>.js, probes, resources and no privileges",
    (folder) => {
      const deployments = ofKind<Deployment>(objectsOf(folder), "Deployment");
      expect(deployments.length).toBeGreaterThan(0);
      for (const deployment of deployments) {
        const pod = deployment.spec.template.spec;
        const main = container(deployment);
        const sandbox = { ...pod.securityContext, ...main.securityContext };

        expect(main.image).toBe(imageOfComponent());
        expect(main.command).toEqual(["node", ENTRY_OF[deployment.metadata.name]]);
        for (const probe of [main.startupProbe, main.readinessProbe, main.livenessProbe]) {
          expect(probe?.httpGet?.path).toMatch(/^\//);
        }
        expect(main.resources?.requests).toMatchObject({
          cpu: expect.any(String),
          memory: expect.any(String),
        });
        expect(main.resources?.limits).toMatchObject({ memory: expect.any(String) });
        expect(sandbox).toMatchObject({
          runAsNonRoot: true,
          runAsUser: 65532,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
          seccompProfile: { type: "RuntimeDefault" },
        });
        expect(pod).not.toHaveProperty("volumes");
      }
    },
  );

  it.each(FOLDERS)("%s: every selector finds its Deployment's pods", (folder) => {
    const objects = objectsOf(folder);
    const podLabels = ofKind<Deployment>(objects, "Deployment").map((d) => d.spec.template.metadata.labels);
    const finds = (selector: Labels | undefined) =>
      selector !== undefined && podLabels.some((labels) => selects(selector, labels));

    for (const deployment of ofKind<Deployment>(objects, "Deployment")) {
      expect(selects(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(
        true,
      );
    }
    for (const object of objects) {
      const spec = object.spec as {
        selector?: Labels | { matchLabels: Labels };
        podSelector?: { matchLabels: Labels };
      };
      if (object.kind === "Service") expect(finds(spec.selector as Labels)).toBe(true);
      if (object.kind === "PodDisruptionBudget") {
        expect(finds((spec.selector as { matchLabels: Labels }).matchLabels)).toBe(true);
      }
      if (object.kind === "NetworkPolicy") expect(finds(spec.podSelector?.matchLabels)).toBe(true);
    }
  });

  it("names the image once: every manifest says `image: edgeslice`, the component sets name and tag", () => {
    const manifests = RUNNING.flatMap((folder) => {
      const text = readFileSync(join(DEPLOY, "..", folder, "kustomization.yaml"), "utf8");
      return (parse(text) as { resources?: string[] }).resources ?? [];
    });
    const images = [join(DEPLOY, "sync/deployment.yaml"), join(DEPLOY, "router/deployment.yaml")].flatMap(
      (file) => [...readFileSync(file, "utf8").matchAll(/^\s*image:\s*(\S+)/gm)].map((match) => match[1]),
    );

    expect(manifests).toEqual(expect.arrayContaining(["../../sync", "../../router"]));
    expect(images).toEqual(["edgeslice", "edgeslice"]);
    expect(imageOfComponent()).toMatch(/^[\w.-]+(:\d+)?\/[\w./-]+:[\w.-]+$/);
  });
});
