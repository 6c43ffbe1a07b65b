import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createCertificateSource } from "../../../functions/node/tls/certificate-source.js";
import { silentLogger } from "../../../lib/logger.js";
import { sealBinding, sealKey } from "../../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION } from "../../../store/certificates.js";
import { createRedisCertificateReader } from "../../../store/redis/certificate-reader.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import { createTestAuthority } from "../../support/certificates.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

/** edgeslice_tls_certificate_expiry_timestamp_seconds: each certificate served, with its leaf's notAfter. */
describe("the certificate source's expiries", () => {
  const prefix = uniquePrefix("cert-expiry");
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  it("names each certificate by cluster and Secret with its leaf's notAfter, the CA after it in the chain ignored", async () => {
    const storeKey = randomBytes(32);
    const ca = createTestAuthority();
    const soon = ca.issue(["soon.test"], 2);
    const later = ca.issue(["later.test"], 30);
    const writer = createRedisWriter(redis, { prefix, cluster: "east" });
    await writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    for (const [id, leaf, host] of [
      ["shop/soon", soon, "soon.test"],
      ["shop/later", later, "later.test"],
    ] as const) {
      await writer.certificates?.putCertificate({
        v: CERTIFICATE_SCHEMA_VERSION,
        id,
        hostnames: [host],
        version: (id === "shop/soon" ? "a" : "b").repeat(64),
        // The chain as a Secret's tls.crt holds it: leaf first, then the CA.
        cert: `${leaf.cert}${ca.cert}`,
        key: sealKey(storeKey, sealBinding("east", id), leaf.key),
      });
    }
    const source = createCertificateSource({
      reader: createRedisCertificateReader(redis, prefix),
      storeKey,
      logger: silentLogger,
    });
    await source.refresh();
    const now = Date.now() / 1000;
    const byId = new Map(source.expiries().map((expiry) => [expiry.id, expiry]));
    expect([...byId.keys()].sort()).toEqual(["shop/later", "shop/soon"]);
    expect(byId.get("shop/soon")?.cluster).toBe("east");
    const days = (id: string) => ((byId.get(id)?.notAfter ?? 0) - now) / 86_400;
    expect(days("shop/soon")).toBeGreaterThan(1.9);
    expect(days("shop/soon")).toBeLessThan(2.1);
    expect(days("shop/later")).toBeGreaterThan(29.9);
    source.close();
  });
});
