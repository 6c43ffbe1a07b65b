import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_CONTROLLER, INGRESS_CONTROLLER } from "../../sync/translate/desired-routes.js";
import { type KubeObject, only, ROOT, render } from "./support/render.js";

const run = promisify(execFile);
/** As an operator runs it, from the repository root. */
const SCRIPT = "deploy/apply.sh";

/**
 * deploy/apply.sh runs whatever KUBECTL names; here a stand-in that writes each command line it gets to a log
 * and builds every `apply -k` folder with the real `kubectl kustomize` (so a folder that does not build fails
 * the script), and answers `get crd` as the test says. What a real API server makes of the objects is
 * test/deploy/apiserver.test.ts's.
 */
const STAND_IN = `#!/bin/sh
echo "$*" >> "$LOG"
case "$1" in
  apply) exec kubectl kustomize "$3" > /dev/null ;;
  get) [ "$CRDS" = installed ] ;;
esac
`;

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgeslice-apply-"));
  await writeFile(join(dir, "kubectl"), STAND_IN);
  await chmod(join(dir, "kubectl"), 0o755);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** deploy/apply.sh with `args`, from the repository root; its exit code, stderr and the commands it ran. */
async function apply(args: string[], crds: "installed" | "missing") {
  const log = join(dir, `${crds}-${args.length}.log`);
  const env = { PATH: process.env.PATH, KUBECTL: join(dir, "kubectl"), LOG: log, CRDS: crds };
  const ran = await run(SCRIPT, args, { cwd: ROOT, env }).then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  const commands = await readFile(log, "utf8").then(
    (text) => text.trim().split("\n"),
    () => [],
  );
  return { ...ran, commands };
}

describe("deploy/apply.sh", () => {
  it("applies the classes, then the sync's overlay, then the routers', each with kubectl apply -k", async () => {
    const result = await apply(["deploy/overlays/east", "deploy/overlays/east-router"], "installed");

    expect(result).toEqual({
      code: 0,
      stderr: "",
      commands: [
        "apply -k deploy/ingress-class",
        "get crd gatewayclasses.gateway.networking.k8s.io",
        "apply -k deploy/gateway-class",
        "apply -k deploy/overlays/east",
        "apply -k deploy/overlays/east-router",
      ],
    });
  });

  it("skips the GatewayClass, saying so, where the Gateway API CRDs are not installed", async () => {
    const result = await apply(["deploy/overlays/west"], "missing");

    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/Gateway API CRDs are not installed: skipping deploy\/gateway-class/);
    expect(result.commands).toEqual([
      "apply -k deploy/ingress-class",
      "get crd gatewayclasses.gateway.networking.k8s.io",
      "apply -k deploy/overlays/west",
    ]);
  });

  it("refuses a wrong command line with its usage, exit 2, and applies nothing", async () => {
    const result = await apply([], "installed");

    expect(result).toMatchObject({ code: 2, commands: [] });
    expect(result.stderr).toMatch(/^usage: .*apply\.sh SYNC_OVERLAY \[ROUTER_OVERLAY\]/);
  });

  it("creates with the sync's overlay, applied first, the namespace every later object lives in", async () => {
    const sync = await render("deploy/overlays/east");
    const routers = await render("deploy/overlays/east-router");
    const namespace = only(sync, "Namespace").metadata.name;
    const namespaced = (objects: KubeObject[]) =>
      objects.filter((object) => object.metadata.namespace !== undefined);

    expect(namespaced([...sync, ...routers]).length).toBeGreaterThan(5);
    for (const object of namespaced([...sync, ...routers])) expect(object.metadata.namespace).toBe(namespace);
  });

  it("ships the classes whose controller names the sync looks for", async () => {
    const gatewayClass = only(await render("deploy/gateway-class"), "GatewayClass");
    const ingressClass = only(await render("deploy/ingress-class"), "IngressClass");

    expect(gatewayClass.spec).toMatchObject({ controllerName: GATEWAY_CONTROLLER });
    expect(ingressClass.spec).toMatchObject({ controller: INGRESS_CONTROLLER });
  });
});
