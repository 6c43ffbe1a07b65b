import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openKey, sealBinding, sealKey } from "../../store/certificate-seal.js";
import {
  CERTIFICATE_SCHEMA_VERSION,
  type CertificateRecord,
  decodeCertificateRecord,
} from "../../store/certificates.js";
import {
  CLIENT_VALIDATION_SCHEMA_VERSION,
  type ClientValidationRecord,
  clientValidationId,
  decodeClientValidationRecord,
} from "../../store/client-validations.js";
import { FenceRefusedError } from "../../store/store.js";
import { createTestAuthority } from "../support/certificates.js";
import type { StoreDriver } from "./store.case.js";

const STORE_KEY = randomBytes(32);
const AUTHORITY = createTestAuthority();
const LEAF = AUTHORITY.issue(["shop.example.com"]);

function record(
  cluster: string,
  id: string,
  hostnames: string[],
  version = "a".repeat(64),
): CertificateRecord {
  return {
    v: CERTIFICATE_SCHEMA_VERSION,
    id,
    hostnames,
    version,
    cert: LEAF.cert,
    key: sealKey(STORE_KEY, sealBinding(cluster, id), LEAF.key),
  };
}

/**
 * Certificate records (store/certificates.ts) as every store implements them: what a router's
 * CertificateReader reads back and when its version moves, what the sync loads, and the fence over them.
 */
export function describeCertificateContract(driver: () => StoreDriver): void {
  describe("certificate records", () => {
    const writerOf = async (cluster: string) => {
      const writer = driver().writer(cluster);
      // Redis lists a cluster once it beat (the registry); MemoryStore from its first write.
      await writer.heartbeat({ holder: "contract", leaseMs: 60_000, at: Date.now() });
      const certificates = writer.certificates;
      if (!certificates) throw new Error("this store's writer has no certificate records");
      return certificates;
    };
    const reader = () => {
      const found = driver().certificates;
      if (!found) throw new Error("this store has no CertificateReader");
      return found;
    };

    it("gives a router the record put, sealed key and all, and a version that moves with each write", async () => {
      const east = await writerOf("east");
      const put = record("east", "shop/tls", ["shop.example.com", "*.shop.example.com"]);
      await east.putCertificate(put);
      const first = (await reader().versions()).get("east");
      expect(first).toBeDefined();
      const raw = (await reader().records("east")).get("shop/tls");
      const decoded = raw === undefined ? undefined : decodeCertificateRecord(raw);
      expect(decoded?.ok && decoded.value).toEqual(put);
      if (!decoded?.ok) return;
      expect(openKey(STORE_KEY, sealBinding("east", "shop/tls"), decoded.value.key)).toEqual({
        ok: true,
        value: LEAF.key,
      });
      expect(raw).not.toContain("PRIVATE KEY");

      await east.putCertificate(record("east", "shop/tls", ["shop.example.com"], "b".repeat(64)));
      const second = (await reader().versions()).get("east");
      expect(second).not.toBe(first);
      await east.removeCertificate("shop/tls");
      expect((await reader().versions()).get("east")).not.toBe(second);
      expect((await reader().records("east")).size).toBe(0);
    });

    it("keeps each cluster's records apart, and loads them back for the sync", async () => {
      const east = await writerOf("east");
      const west = await writerOf("west");
      await east.putCertificate(record("east", "a/one", ["one.test"]));
      await west.putCertificate(record("west", "a/one", ["two.test"]));
      expect([...(await east.loadCertificates()).keys()]).toEqual(["a/one"]);
      const westRecord = (await reader().records("west")).get("a/one");
      expect(westRecord).toContain("two.test");
      // A key sealed for east does not open as west's: the binding is part of the seal.
      const decoded = decodeCertificateRecord(westRecord ?? "");
      expect(decoded.ok && openKey(STORE_KEY, sealBinding("east", "a/one"), decoded.value.key).ok).toBe(
        false,
      );
    });

    it("refuses an invalid record and a write under another replica's fence, storing nothing", async () => {
      const east = await writerOf("east");
      await expect(
        east.putCertificate({ ...record("east", "a/bad", ["ok.test"]), hostnames: ["Not A Host"] }),
      ).rejects.toThrow(/invalid certificate record/);
      const holder = driver().writer("fenced", { holder: "replica-a", ttlMs: 60_000 });
      await holder.fence?.acquire(0);
      const other = driver().writer("fenced", { holder: "replica-b", ttlMs: 60_000 });
      await expect(
        other.certificates?.putCertificate(record("fenced", "a/one", ["one.test"])),
      ).rejects.toBeInstanceOf(FenceRefusedError);
      expect((await reader().records("fenced")).size).toBe(0);
      expect((await east.loadCertificates()).size).toBe(0);
    });

    it("gives a router a Gateway port's client validation record beside the certificates, the version moving with it", async () => {
      const east = await writerOf("east");
      const before = (await reader().versions()).get("east");
      const put = validation("infra/gw", 443);
      await east.putClientValidation(put);
      const after = (await reader().versions()).get("east");
      expect(after).not.toBe(before);
      const raw = (await reader().clientValidations("east")).get("infra/gw:443");
      const decoded = raw === undefined ? undefined : decodeClientValidationRecord(raw);
      expect(decoded?.ok && decoded.value).toEqual(put);
      // Kept apart from the certificates, and from other clusters.
      expect((await reader().records("east")).has("infra/gw:443")).toBe(false);
      expect((await reader().clientValidations("west")).size).toBe(0);
      expect([...(await east.loadClientValidations()).keys()]).toEqual(["infra/gw:443"]);
      await east.removeClientValidation("infra/gw:443");
      expect((await reader().versions()).get("east")).not.toBe(after);
      expect((await reader().clientValidations("east")).size).toBe(0);
    });

    it("refuses an invalid client validation record and one under another replica's fence", async () => {
      const east = await writerOf("east");
      await expect(
        east.putClientValidation({ ...validation("infra/gw", 443), ca: "not PEM" }),
      ).rejects.toThrow(/invalid client validation record/);
      const holder = driver().writer("fenced-validation", { holder: "replica-a", ttlMs: 60_000 });
      await holder.fence?.acquire(0);
      const other = driver().writer("fenced-validation", { holder: "replica-b", ttlMs: 60_000 });
      await expect(
        other.certificates?.putClientValidation(validation("infra/gw", 8443)),
      ).rejects.toBeInstanceOf(FenceRefusedError);
      expect((await reader().clientValidations("fenced-validation")).size).toBe(0);
      expect((await east.loadClientValidations()).size).toBe(0);
    });
  });
}

function validation(gateway: string, port: number): ClientValidationRecord {
  return {
    v: CLIENT_VALIDATION_SCHEMA_VERSION,
    id: clientValidationId(gateway, port),
    gateway,
    port,
    hostnames: ["second-example.org"],
    anyHost: true,
    mode: "AllowValidOnly",
    ca: AUTHORITY.cert,
    version: "c".repeat(64),
  };
}
