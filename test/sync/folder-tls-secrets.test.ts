import { createHash, randomBytes, X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { silentLogger } from "../../lib/logger.js";
import { openKey, sealBinding } from "../../store/certificate-seal.js";
import { decodeCertificateRecord } from "../../store/certificates.js";
import { clusterKeys } from "../../store/keys.js";
import { parseSyncConfig } from "../../sync/config.js";
import { publishFromFolder } from "../../sync/folder.js";
import { createTestAuthority, tlsSecret } from "../support/certificates.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { logLines, runSync } from "./run-sync-cli.js";

/** `--from DIR` reads TLS Secrets from YAML manifests as the live sync reads them from the API server. */
describe("the sync's folder mode with an HTTPS listener", () => {
  const prefix = uniquePrefix("folder-tls");
  const storeKey = randomBytes(32);
  const leaf = createTestAuthority().issue(["shop.example.com"]);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeslice-folder-tls-"));
    const gatewayApi = "gateway.networking.k8s.io/v1";
    const manifests = [
      {
        apiVersion: gatewayApi,
        kind: "GatewayClass",
        metadata: { name: "edgeslice" },
        spec: { controllerName: "edgeslice.io/gateway-controller" },
      },
      {
        apiVersion: gatewayApi,
        kind: "Gateway",
        metadata: { name: "web", namespace: "shop" },
        spec: {
          gatewayClassName: "edgeslice",
          listeners: [
            {
              name: "https",
              port: 443,
              protocol: "HTTPS",
              hostname: "shop.example.com",
              tls: { certificateRefs: [{ name: "shop-tls" }] },
            },
            {
              name: "broken",
              port: 443,
              protocol: "HTTPS",
              hostname: "b.example.com",
              tls: { certificateRefs: [{ name: "none" }] },
            },
          ],
        },
      },
      tlsSecret("shop", "shop-tls", leaf),
      // Not referenced by any listener: never published.
      tlsSecret("shop", "unused-tls", leaf),
    ];
    await writeFile(join(dir, "objects.yaml"), manifests.map((item) => stringify(item)).join("---\n"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  it("publishes the referenced Secret's certificate with its key sealed, and no other", async () => {
    const config = parseSyncConfig({
      CLUSTER_NAME: "east",
      EDGESLICE_PREFIX: prefix,
      REDIS_URL,
      TLS_STORE_KEY: storeKey.toString("base64"),
    });
    expect(await publishFromFolder(dir, config, { logger: silentLogger, once: true })).toBe(0);
    const stored = await redis.hgetall(clusterKeys(prefix, "east").certificates);
    expect(Object.keys(stored)).toEqual(["shop/shop-tls"]);
    const decoded = decodeCertificateRecord(stored["shop/shop-tls"] ?? "");
    expect(decoded.ok && decoded.value.hostnames).toEqual(["shop.example.com"]);
    expect(stored["shop/shop-tls"]).not.toContain("PRIVATE KEY");
    expect(decoded.ok && openKey(storeKey, sealBinding("east", "shop/shop-tls"), decoded.value.key)).toEqual({
      ok: true,
      value: leaf.key,
    });
  });

  it("prints with --print the certificate it would publish, what it is and for which names, never the key", async () => {
    const run = await runSync(["--from", dir, "--print"], { CLUSTER_NAME: "east", TLS_STORE_KEY: undefined });
    const certificates = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => "certificate" in line);
    const parsed = new X509Certificate(leaf.cert);
    const keyBody = leaf.key.split("\n").slice(1, -2).join("");

    expect(run.code).toBe(0);
    expect(certificates).toEqual([
      {
        cluster: "east",
        certificate: "shop/shop-tls",
        hostnames: ["shop.example.com"],
        subject: "CN=shop.example.com",
        issuer: "CN=edgeslice test CA",
        names: ["shop.example.com"],
        notBefore: new Date(parsed.validFrom).toISOString(),
        notAfter: new Date(parsed.validTo).toISOString(),
        chain: 1,
        version: createHash("sha256").update(leaf.cert).digest("hex"),
      },
    ]);
    expect(run.stdout).not.toContain("PRIVATE KEY");
    expect(keyBody.length).toBeGreaterThan(40);
    expect(run.stdout).not.toContain(keyBody.slice(0, 40));
    expect(logLines(run.stderr).map((line) => line.msg)).toContain(
      "TLS_STORE_KEY is not set: the sync would publish none of these certificates",
    );
  });

  it("seals every record again under a new TLS_STORE_KEY, though no certificate changed", async () => {
    const newKey = randomBytes(32);
    const config = parseSyncConfig({
      CLUSTER_NAME: "east",
      EDGESLICE_PREFIX: prefix,
      REDIS_URL,
      TLS_STORE_KEY: newKey.toString("base64"),
    });
    expect(await publishFromFolder(dir, config, { logger: silentLogger, once: true })).toBe(0);
    const raw = await redis.hget(clusterKeys(prefix, "east").certificates, "shop/shop-tls");
    const decoded = decodeCertificateRecord(raw ?? "");
    expect(decoded.ok && openKey(newKey, sealBinding("east", "shop/shop-tls"), decoded.value.key)).toEqual({
      ok: true,
      value: leaf.key,
    });
    expect(decoded.ok && openKey(storeKey, sealBinding("east", "shop/shop-tls"), decoded.value.key).ok).toBe(
      false,
    );
  });

  it("refuses a TLS_STORE_KEY that is not 32 bytes of base64, naming the variable", () => {
    expect(() => parseSyncConfig({ CLUSTER_NAME: "east", TLS_STORE_KEY: "c2hvcnQ=" })).toThrow(
      /TLS_STORE_KEY must be 32 bytes/,
    );
  });
});
