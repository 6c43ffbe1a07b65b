import type { BackendTlsWriter } from "../store/backend-tls.js";
import type { CertificateWriter } from "../store/certificates.js";
import type { ClusterWriter, WriterFence } from "../store/store.js";

/** Runs one store write and looks at what it says of the fence (publish-role.ts). */
export type Observe = <T>(write: () => Promise<T>) => Promise<T>;

/** `inner` with every write (not the loads) passed through `observe`, so the role hears of each refusal. */
export function observedWriter(
  inner: ClusterWriter & { readonly fence: WriterFence },
  observe: Observe,
): ClusterWriter {
  return {
    cluster: inner.cluster,
    fence: inner.fence,
    put: (record) => observe(() => inner.put(record)),
    remove: (service) => observe(() => inner.remove(service)),
    putService: (record) => observe(() => inner.putService(record)),
    removeService: (service) => observe(() => inner.removeService(service)),
    putRoute: (route) => observe(() => inner.putRoute(route)),
    removeRoute: (id) => observe(() => inner.removeRoute(id)),
    load: () => inner.load(),
    loadAll: () => inner.loadAll(),
    heartbeat: (beat) => observe(() => inner.heartbeat(beat)),
    ...(inner.certificates ? { certificates: observedCertificates(inner.certificates, observe) } : {}),
    ...(inner.backendTls ? { backendTls: observedBackendTls(inner.backendTls, observe) } : {}),
  };
}

/** The certificate writes of `inner`, each observed for the fence as every other write. */
function observedCertificates(inner: CertificateWriter, observe: Observe): CertificateWriter {
  return {
    putCertificate: (record) => observe(() => inner.putCertificate(record)),
    removeCertificate: (id) => observe(() => inner.removeCertificate(id)),
    loadCertificates: () => inner.loadCertificates(),
    putClientValidation: (record) => observe(() => inner.putClientValidation(record)),
    removeClientValidation: (id) => observe(() => inner.removeClientValidation(id)),
    loadClientValidations: () => inner.loadClientValidations(),
  };
}

function observedBackendTls(inner: BackendTlsWriter, observe: Observe): BackendTlsWriter {
  return {
    putBackendTls: (record) => observe(() => inner.putBackendTls(record)),
    removeBackendTls: (field) => observe(() => inner.removeBackendTls(field)),
    loadBackendTls: () => inner.loadBackendTls(),
  };
}
