import type { Answer } from "../../e2e/support/host-client.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import { createTestAuthority, type TestAuthority } from "../../support/certificates.js";
import { type HttpsEcho, startHttpsEcho, type TlsEchoedRequest } from "../../support/https-echo.js";
import { configMapObject, serviceAt } from "./backend-tls-objects.js";

/** The SPIFFE id the suite's TLS backend certificate carries as a URI SAN. */
export const TLS_BACKEND_SPIFFE = "spiffe://abc.example.com/test-identity";

/**
 * The official suite's `tls-backend` made at test time: an HTTPS echo backend on loopback whose certificate,
 * signed by the CA of the ConfigMap `tls-checks-ca-certificate`, names abc.example.com and other.example.com
 * and carries TLS_BACKEND_SPIFFE; `mismatch-ca-certificate` holds another CA, which signed nothing of it.
 */
export interface TlsChecksBackend {
  readonly authority: TestAuthority;
  readonly backend: HttpsEcho;
  /** The two CA ConfigMaps, as the suite makes them when it starts. */
  readonly configMaps: readonly ApplyInput[];
  /** Service `name` with `ports` (port 443 named as given, and others), its one endpoint the backend. */
  serviceObjects(
    name: string,
    ports: readonly { readonly name: string; readonly port: number }[],
  ): ApplyInput[];
  close(): Promise<void>;
}

export async function startTlsChecksBackend(): Promise<TlsChecksBackend> {
  const authority = createTestAuthority("tls-checks CA");
  const stranger = createTestAuthority("mismatch CA");
  const backend = await startHttpsEcho(
    "gateway-conformance-infra/tls-backend",
    authority.issue(["abc.example.com", "other.example.com", TLS_BACKEND_SPIFFE]),
  );
  return {
    authority,
    backend,
    configMaps: [
      configMapObject("tls-checks-ca-certificate", { "ca.crt": authority.cert }),
      configMapObject("mismatch-ca-certificate", { "ca.crt": stranger.cert }),
    ],
    serviceObjects: (name, ports) => serviceAt(name, backend, ports),
    close: () => backend.close(),
  };
}

/** What the TLS backend saw of the request an answer is to (the server name above all), or undefined. */
export function tlsEcho(answer: Answer): TlsEchoedRequest | undefined {
  return answer.echo as unknown as TlsEchoedRequest | undefined;
}
