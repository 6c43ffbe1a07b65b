import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  BACKEND_TLS_SCHEMA_VERSION,
  type BackendClientCertificateRecord,
  type BackendTlsPolicyRecord,
  backendTlsField,
  clientCertificateBinding,
  decodeBackendTlsRecord,
} from "../../store/backend-tls.js";
import { openKey, sealKey } from "../../store/certificate-seal.js";
import { FenceRefusedError } from "../../store/store.js";
import { createTestAuthority } from "../support/certificates.js";
import type { StoreDriver } from "./store.case.js";

const STORE_KEY = randomBytes(32);
const AUTHORITY = createTestAuthority("backend CA");
const CLIENT = AUTHORITY.issue(["gateway.example.com"]);

function policy(id: string, hostname: string, version = "a".repeat(64)): BackendTlsPolicyRecord {
  return {
    v: BACKEND_TLS_SCHEMA_VERSION,
    kind: "policy",
    id,
    version,
    hostname,
    subjectAltNames: [
      { type: "Hostname", hostname },
      { type: "URI", uri: `spiffe://${hostname}/backend` },
    ],
    trust: { pem: AUTHORITY.cert },
  };
}

function client(cluster: string, id: string): BackendClientCertificateRecord {
  return {
    v: BACKEND_TLS_SCHEMA_VERSION,
    kind: "client",
    id,
    version: "c".repeat(64),
    cert: CLIENT.cert,
    key: sealKey(STORE_KEY, clientCertificateBinding(cluster, id), CLIENT.key),
  };
}

/**
 * Backend TLS records (store/backend-tls.ts) as every store implements them: BackendTLSPolicy validations and
 * Gateways' sealed client certificates, what a router's BackendTlsReader reads and when its version moves,
 * what the sync loads back, and the fence over them.
 */
export function describeBackendTlsContract(driver: () => StoreDriver): void {
  describe("backend TLS records", () => {
    const writerOf = async (cluster: string) => {
      const writer = driver().writer(cluster);
      await writer.heartbeat({ holder: "contract", leaseMs: 60_000, at: Date.now() });
      const backendTls = writer.backendTls;
      if (!backendTls) throw new Error("this store's writer has no backend TLS records");
      return backendTls;
    };
    const reader = () => {
      const found = driver().backendTls;
      if (!found) throw new Error("this store has no BackendTlsReader");
      return found;
    };

    it("gives a router the policy and client records put, and a version that moves with each write", async () => {
      const east = await writerOf("east");
      const valid = policy("shop/backend", "api.shop.test");
      const certificate = client("east", "infra/edge");
      await east.putBackendTls(valid);
      const first = (await reader().versions()).get("east");
      expect(first).toBeDefined();
      await east.putBackendTls(certificate);
      const records = await reader().records("east");
      expect([...records.keys()].sort()).toEqual(["client:infra/edge", "policy:shop/backend"]);
      const decodedPolicy = decodeBackendTlsRecord(records.get("policy:shop/backend") ?? "");
      expect(decodedPolicy.ok && decodedPolicy.value).toEqual(valid);
      const rawClient = records.get("client:infra/edge") ?? "";
      expect(rawClient).not.toContain("PRIVATE KEY");
      const decodedClient = decodeBackendTlsRecord(rawClient);
      expect(decodedClient.ok && decodedClient.value.kind === "client").toBe(true);
      if (decodedClient.ok && decodedClient.value.kind === "client") {
        const opened = openKey(
          STORE_KEY,
          clientCertificateBinding("east", "infra/edge"),
          decodedClient.value.key,
        );
        expect(opened).toEqual({ ok: true, value: CLIENT.key });
      }
      const second = (await reader().versions()).get("east");
      expect(second).not.toBe(first);
      await east.removeBackendTls(backendTlsField(valid));
      expect((await reader().versions()).get("east")).not.toBe(second);
      expect([...(await reader().records("east")).keys()]).toEqual(["client:infra/edge"]);
    });

    it("keeps each cluster's records apart, and loads them back for the sync", async () => {
      const east = await writerOf("east");
      const west = await writerOf("west");
      await east.putBackendTls(policy("a/one", "one.test"));
      await west.putBackendTls(policy("a/one", "two.test"));
      expect([...(await east.loadBackendTls()).keys()]).toEqual(["policy:a/one"]);
      expect((await reader().records("west")).get("policy:a/one")).toContain("two.test");
      expect((await reader().records("east")).get("policy:a/one")).toContain("one.test");
    });

    it("refuses an invalid record and a write under another replica's fence, storing nothing", async () => {
      const east = await writerOf("east");
      await expect(
        east.putBackendTls({ ...policy("a/bad", "ok.test"), hostname: "*.wild.test" }),
      ).rejects.toThrow(/invalid backend TLS record/);
      const holder = driver().writer("fenced", { holder: "replica-a", ttlMs: 60_000 });
      await holder.fence?.acquire(0);
      const other = driver().writer("fenced", { holder: "replica-b", ttlMs: 60_000 });
      await expect(other.backendTls?.putBackendTls(policy("a/one", "one.test"))).rejects.toBeInstanceOf(
        FenceRefusedError,
      );
      expect((await reader().records("fenced")).size).toBe(0);
      expect((await east.loadBackendTls()).size).toBe(0);
    });
  });
}
