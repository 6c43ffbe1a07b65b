import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { startNodeRouter } from "../../../functions/node/server.js";
import { createCertificateSource } from "../../../functions/node/tls/certificate-source.js";
import { selectCertificate } from "../../../functions/node/tls/certificate-table.js";
import { sealBinding, sealKey } from "../../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION, type CertificateRecord } from "../../../store/certificates.js";
import { clusterKeys } from "../../../store/keys.js";
import { createRedisCertificateReader } from "../../../store/redis/certificate-reader.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import { createTestAuthority } from "../../support/certificates.js";
import { recordingLogger } from "../../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

const STORE_KEY = randomBytes(32);
const ca = createTestAuthority();
const good = ca.issue(["good.test"]);

function record(cluster: string, id: string, host: string, key = STORE_KEY): CertificateRecord {
  return {
    v: CERTIFICATE_SCHEMA_VERSION,
    id,
    hostnames: [host],
    version: "c".repeat(64),
    cert: good.cert,
    key: sealKey(key, sealBinding(cluster, id), good.key),
  };
}

/** The router's certificate records over real Redis, some of them broken as a faulty or foreign writer could. */
describe("the router's certificate source", () => {
  const prefix = uniquePrefix("cert-source");
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  it("skips a record that does not decode, does not open, or names another id, logging each once, and serves the rest", async () => {
    const writer = createRedisWriter(redis, { prefix, cluster: "east" });
    await writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    await writer.certificates?.putCertificate(record("east", "a/good", "good.test"));
    // Sealed under another key, moved from another id, and not JSON: what a router must survive.
    await writer.certificates?.putCertificate(record("east", "a/other-key", "other.test", randomBytes(32)));
    const keys = clusterKeys(prefix, "east");
    await redis.hset(keys.certificates, "a/moved", JSON.stringify(record("east", "a/good", "moved.test")));
    await redis.hset(keys.certificates, "a/garbage", "{not json");
    await redis.incr(keys.certificatesVersion);

    const { logger, entries } = recordingLogger();
    const source = createCertificateSource({
      reader: createRedisCertificateReader(redis, prefix),
      storeKey: STORE_KEY,
      logger,
    });
    await source.refresh();
    // A version bump re-reads the cluster: the same broken records are not logged again.
    await redis.incr(keys.certificatesVersion);
    await source.refresh();

    const chosen = selectCertificate(source.table(), "good.test");
    expect(chosen?.id).toBe("a/good");
    expect(chosen && source.context(chosen)).toBeDefined();
    expect(selectCertificate(source.table(), "other.test")).toBeUndefined();
    expect(selectCertificate(source.table(), "moved.test")).toBeUndefined();
    expect(source.table().size).toBe(1);
    const warnings = entries.filter((entry) => entry.level === "warn");
    expect(warnings.map((entry) => entry.fields.id).sort()).toEqual(["a/garbage", "a/moved", "a/other-key"]);
    const otherKey = warnings.find((entry) => entry.fields.id === "a/other-key");
    expect(String(otherKey?.fields.reason)).toMatch(
      /sealed under another TLS_STORE_KEY \(key id [0-9a-f]{16}; this one is [0-9a-f]{16}\)/,
    );
    source.close();
  });

  it("serves no HTTPS without TLS_STORE_KEY, and says why once", async () => {
    const { logger, entries } = recordingLogger();
    const config = parseRouterConfig({ REDIS_URL, PORT: "0", EDGESLICE_PREFIX: prefix });
    const router = await startNodeRouter(config, { host: "127.0.0.1", logger });
    try {
      expect(router.https).toBeUndefined();
      expect(entries.filter((entry) => entry.message.includes("TLS_STORE_KEY is not set"))).toHaveLength(1);
    } finally {
      await router.close();
    }
  });
});
