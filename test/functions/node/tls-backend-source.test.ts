import { describe, expect, it } from "vitest";
import { BackendTlsSource } from "../../../functions/node/tls/backend-tls-source.js";
import {
  BACKEND_TLS_SCHEMA_VERSION,
  type BackendTlsPolicyRecord,
  type BackendTlsReader,
} from "../../../store/backend-tls.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { createTestAuthority } from "../../support/certificates.js";
import { recordingLogger } from "../../support/loggers.js";

const authority = createTestAuthority("source test CA");

function policy(id: string, version: string): BackendTlsPolicyRecord {
  return {
    v: BACKEND_TLS_SCHEMA_VERSION,
    kind: "policy",
    id,
    version: version.repeat(64),
    hostname: "api.shop.test",
    subjectAltNames: [],
    trust: { pem: authority.cert },
  };
}

/** The store's reader, or an outage (every read rejects) while `down` is set. */
class FlakyReader implements BackendTlsReader {
  down = false;
  constructor(readonly inner: BackendTlsReader) {}
  versions() {
    return this.down ? Promise.reject(new Error("connection lost")) : this.inner.versions();
  }
  records(cluster: string) {
    return this.down ? Promise.reject(new Error("connection lost")) : this.inner.records(cluster);
  }
}

/** The router's view of the backend TLS records (node/tls/backend-tls-source.ts), over a MemoryStore. */
describe("the backend TLS source", () => {
  it("keeps one setup per policy version: the same while unchanged, a new one once the record changed", async () => {
    const store = new MemoryStore();
    const east = store.writer("east");
    await east.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    await east.backendTls?.putBackendTls(policy("shop/api-tls", "a"));
    const { logger } = recordingLogger();
    const source = new BackendTlsSource(store.backendTls, logger);
    await source.refresh();
    const first = source.setupFor("east", "shop/api-tls");
    expect(first).toMatchObject({ cluster: "east", policy: "shop/api-tls", version: "a".repeat(64) });
    expect(source.setupFor("west", "shop/api-tls")).toBeUndefined();

    await east.backendTls?.putBackendTls(policy("shop/other-tls", "b"));
    await source.refresh();
    expect(source.setupFor("east", "shop/api-tls")).toBe(first);

    await east.backendTls?.putBackendTls(policy("shop/api-tls", "c"));
    await source.refresh();
    const changed = source.setupFor("east", "shop/api-tls");
    expect(changed?.version).toBe("c".repeat(64));
    expect(changed).not.toBe(first);

    await east.backendTls?.removeBackendTls("policy:shop/api-tls");
    await source.refresh();
    expect(source.setupFor("east", "shop/api-tls")).toBeUndefined();
  });

  it("keeps the last setups while the store cannot be read, saying so once", async () => {
    const store = new MemoryStore();
    const east = store.writer("east");
    await east.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    await east.backendTls?.putBackendTls(policy("shop/api-tls", "a"));
    const reader = new FlakyReader(store.backendTls);
    const { logger, entries } = recordingLogger();
    const source = new BackendTlsSource(reader, logger);
    await source.refresh();
    reader.down = true;
    for (let poll = 0; poll < 3; poll++) await source.refresh();
    expect(source.setupFor("east", "shop/api-tls")?.version).toBe("a".repeat(64));
    expect(entries.filter((entry) => entry.level === "warn").map((entry) => entry.message)).toEqual([
      "cannot read backend TLS records; using the last ones",
    ]);
    reader.down = false;
    await source.refresh();
    expect(entries.at(-1)?.message).toBe("backend TLS records readable again");
  });

  it("logs a refused backend once per backend and reason", () => {
    const { logger, entries } = recordingLogger();
    const source = new BackendTlsSource(new MemoryStore().backendTls, logger);
    for (let round = 0; round < 3; round++)
      source.refused("10.0.0.1:8443", "shop/api-tls", "CERT_HAS_EXPIRED");
    source.refused("10.0.0.1:8443", "shop/api-tls", "ERR_TLS_CERT_ALTNAME_INVALID");
    source.refused("10.0.0.2:8443", "shop/api-tls", "CERT_HAS_EXPIRED");
    expect(entries.map((entry) => `${entry.fields.backend} ${entry.fields.reason}`)).toEqual([
      "10.0.0.1:8443 CERT_HAS_EXPIRED",
      "10.0.0.1:8443 ERR_TLS_CERT_ALTNAME_INVALID",
      "10.0.0.2:8443 CERT_HAS_EXPIRED",
    ]);
  });
});
