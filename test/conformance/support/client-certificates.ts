import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { ApplyInput } from "../../fake-kube/store.js";
import {
  createTestAuthority,
  type TestAuthority,
  type TestCertificate,
  tlsSecret,
} from "../../support/certificates.js";
import { GATEWAY_API, INFRA } from "./conformance-base.js";

/**
 * What the official client certificate validation tests read from the suite's base manifests (gateway-api
 * v1.6.1 conformance/base), issued here at test time: the server certificate `tls-validity-checks-certificate`
 * (example.org, second-example.org), the CA bundles `tls-validity-checks-ca-certificate` and
 * `tls-validity-checks-per-port-ca-certificate` (ConfigMaps with `ca.crt`), and a client certificate issued by
 * each of those two authorities.
 */
export interface ClientCertificateWorld {
  /** The authority of the server certificate: what clients trust. */
  readonly serverCa: TestAuthority;
  /** Issued by the CA of `tls-validity-checks-ca-certificate`. */
  readonly client: TestCertificate;
  /** Issued by the CA of `tls-validity-checks-per-port-ca-certificate`. */
  readonly perPortClient: TestCertificate;
  readonly objects: readonly ApplyInput[];
}

export function clientCertificateWorld(): ClientCertificateWorld {
  const serverCa = createTestAuthority("tls-validity-checks server CA");
  const clientCa = createTestAuthority("tls-validity-checks client CA");
  const perPortCa = createTestAuthority("tls-validity-checks per-port client CA");
  const caConfigMap = (name: string, authority: TestAuthority): ApplyInput => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: INFRA },
    data: { "ca.crt": authority.cert },
  });
  return {
    serverCa,
    client: clientCa.issue(["client.example.org"]),
    perPortClient: perPortCa.issue(["per-port-client.example.org"]),
    objects: [
      tlsSecret(
        INFRA,
        "tls-validity-checks-certificate",
        serverCa.issue(["example.org", "second-example.org"]),
      ),
      caConfigMap("tls-validity-checks-ca-certificate", clientCa),
      caConfigMap("tls-validity-checks-per-port-ca-certificate", perPortCa),
    ],
  };
}

/** An HTTPS listener of the client validation tests, with the shared server certificate. */
export function httpsListener(name: string, port: number, hostname?: string) {
  return {
    name,
    port,
    ...(hostname ? { hostname } : {}),
    protocol: "HTTPS",
    allowedRoutes: { namespaces: { from: "Same" } },
    tls: {
      certificateRefs: [
        { group: "", kind: "Secret", name: "tls-validity-checks-certificate", namespace: INFRA },
      ],
    },
  };
}

/** A Gateway of the infra namespace with `spec.tls.frontend`. */
export function gatewayWithFrontend(
  name: string,
  frontend: Record<string, unknown>,
  listeners: readonly Record<string, unknown>[],
): ApplyInput {
  return {
    apiVersion: GATEWAY_API,
    kind: "Gateway",
    metadata: { name, namespace: INFRA, generation: 1 },
    spec: { gatewayClassName: "edgeslice", tls: { frontend }, listeners },
  };
}

/** A caCertificateRef to a ConfigMap of the infra namespace. */
export const caRef = (name: string) => ({ kind: "ConfigMap", group: "", name });

/** An answer, or the error that ended the exchange (a refused handshake, a reset). */
export type Answer = { readonly status: number; readonly body: string } | { readonly error: string };

/** One HTTPS GET to 127.0.0.1:`port` with this SNI and Host, trusting `ca`, presenting `client` if given. */
export function httpsGet(
  port: number,
  options: { sni: string; host?: string; ca: string; client?: TestCertificate },
): Promise<Answer> {
  return new Promise((resolve) => {
    const request = httpsRequest({
      host: "127.0.0.1",
      port,
      path: "/",
      servername: options.sni,
      headers: { host: options.host ?? options.sni },
      ca: options.ca,
      agent: false,
      timeout: 5_000,
      ...(options.client ? { cert: options.client.cert, key: options.client.key } : {}),
    });
    collect(request, resolve);
  });
}

/** One plain HTTP GET to `url` with Host `host`. */
export function httpGet(url: string, host: string): Promise<Answer> {
  return new Promise((resolve) => collect(httpRequest(url, { headers: { host }, agent: false }), resolve));
}

function collect(request: ReturnType<typeof httpRequest>, resolve: (answer: Answer) => void): void {
  request.on("response", (response) => {
    let body = "";
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      body += chunk;
    });
    response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    response.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
  request.on("timeout", () => request.destroy(new Error("timeout")));
  request.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  request.end();
}

/** The answer came from `backend` (`namespace/name`, as the echo backends name themselves). */
export const answeredBy = (answer: Answer, backend: string) =>
  "status" in answer && answer.status === 200 && answer.body.includes(backend);
