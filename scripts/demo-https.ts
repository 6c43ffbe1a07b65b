import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GATEWAY_CONTROLLER } from "../sync/translate/desired-routes.js";
import type { Gateway, GatewayClass } from "../sync/translate/gateway/objects.js";
import type { RouteObjects } from "../sync/translate/route-objects.js";
import { type KubeSecret, TLS_SECRET_TYPE } from "../sync/translate/tls-secrets.js";
import { demoCertificate } from "./demo-certificate.js";

/** What `npm start -- --https` serves the demo over HTTPS with, all made at start and gone at the end. */
export interface DemoHttps {
  /** The folder's objects, with a `kubernetes.io/tls` Secret and an HTTPS listener on each of our Gateways. */
  readonly objects: RouteObjects;
  /** A TLS_STORE_KEY for this run: the pipeline seals the key under it, the router opens it. */
  readonly storeKey: Uint8Array;
  /** The certificate in PEM, for `curl --cacert`. */
  readonly certificateFile: string;
  /** The names the certificate is for. */
  readonly names: readonly string[];
  /** Removes the certificate file. */
  close(): Promise<void>;
}

const SECRET = "edgeslice-demo-tls";
const LISTENER = "demo-https";
/** Used when the folder has no Gateway of ours: one is added, with a class when it has none either. */
const DEMO_GATEWAY = { namespace: "default", name: "edgeslice-demo", className: "edgeslice-demo" };

/**
 * The demo over HTTPS the way a cluster serves it: a self-signed certificate for `hosts` (and `localhost`) in a
 * Secret that an HTTPS listener (port 443, no hostname: the certificate for every SNI) of each of our Gateways
 * references. The sync publishes it sealed under a fresh TLS_STORE_KEY and the router ends TLS with it on
 * HTTPS_PORT, as docs/tls.md describes; annotation and Ingress routes are served there too.
 */
export async function demoHttps(objects: RouteObjects, hosts: readonly string[]): Promise<DemoHttps> {
  const names = [...new Set(["localhost", ...hosts.filter((host) => !host.startsWith("*."))])];
  const certificate = demoCertificate(names);
  const ours = new Set(
    objects.gatewayClasses
      .filter((gatewayClass) => gatewayClass.spec.controllerName === GATEWAY_CONTROLLER)
      .map((gatewayClass) => gatewayClass.metadata.name),
  );
  const served = objects.gateways.filter((gateway) => ours.has(gateway.spec.gatewayClassName));
  const gatewayClasses = [...objects.gatewayClasses];
  if (served.length === 0 && ours.size === 0) gatewayClasses.push(demoGatewayClass());
  const added =
    served.length === 0 ? [demoGateway(ours.values().next().value ?? DEMO_GATEWAY.className)] : [];
  const targets = new Set([...served, ...added]);
  const namespaces = new Set([...targets].map((gateway) => gateway.metadata.namespace ?? "default"));
  const dir = await mkdtemp(join(tmpdir(), "edgeslice-demo-https-"));
  const certificateFile = join(dir, "demo.crt");
  await writeFile(certificateFile, certificate.cert);
  return {
    objects: {
      ...objects,
      gatewayClasses,
      gateways: [...objects.gateways, ...added].map((gateway) =>
        targets.has(gateway) ? withHttpsListener(gateway) : gateway,
      ),
      secrets: [...objects.secrets, ...[...namespaces].map((namespace) => tlsSecret(namespace, certificate))],
    },
    storeKey: randomBytes(32),
    certificateFile,
    names,
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

function withHttpsListener(gateway: Gateway): Gateway {
  const listener = {
    name: LISTENER,
    port: 443,
    protocol: "HTTPS",
    tls: { certificateRefs: [{ name: SECRET }] },
  };
  return { ...gateway, spec: { ...gateway.spec, listeners: [...gateway.spec.listeners, listener] } };
}

function tlsSecret(namespace: string, certificate: { cert: string; key: string }): KubeSecret {
  const base64 = (text: string) => Buffer.from(text).toString("base64");
  return {
    metadata: { name: SECRET, namespace },
    type: TLS_SECRET_TYPE,
    data: { "tls.crt": base64(certificate.cert), "tls.key": base64(certificate.key) },
  };
}

function demoGatewayClass(): GatewayClass {
  return { metadata: { name: DEMO_GATEWAY.className }, spec: { controllerName: GATEWAY_CONTROLLER } };
}

function demoGateway(className: string): Gateway {
  return {
    metadata: { name: DEMO_GATEWAY.name, namespace: DEMO_GATEWAY.namespace },
    spec: { gatewayClassName: className, listeners: [] },
  };
}
