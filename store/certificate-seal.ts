import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { Result } from "../lib/result.js";
import type { Sealed } from "./certificates.js";

/**
 * AES-256-GCM over a certificate's private key (NIST SP 800-38D: a fresh random 96-bit nonce per seal, the
 * 128-bit tag checked on open). The additional data binds a sealed key to its cluster and record id, so a key
 * copied into another record or cluster does not open. Node only: the sync and the Node router share
 * TLS_STORE_KEY; Workers never import this.
 */
export function sealKey(storeKey: Uint8Array, bindTo: string, plaintext: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", storeKey, iv);
  cipher.setAAD(Buffer.from(bindTo, "utf8"));
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return {
    alg: "A256GCM",
    kid: storeKeyId(storeKey),
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    data: data.toString("base64"),
  };
}

export function openKey(storeKey: Uint8Array, bindTo: string, sealed: Sealed): Result<string> {
  const kid = storeKeyId(storeKey);
  if (sealed.kid !== kid) {
    return {
      ok: false,
      error: `sealed under another TLS_STORE_KEY (key id ${sealed.kid}; this one is ${kid})`,
    };
  }
  try {
    const decipher = createDecipheriv("aes-256-gcm", storeKey, Buffer.from(sealed.iv, "base64"));
    decipher.setAAD(Buffer.from(bindTo, "utf8"));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]);
    return { ok: true, value: plain.toString("utf8") };
  } catch {
    return { ok: false, error: "the key does not open with TLS_STORE_KEY (another key, or altered)" };
  }
}

/**
 * A TLS_STORE_KEY's id: the first 8 bytes of a domain-separated SHA-256 of it. One-way (the key is 256
 * random bits), so it tells keys apart in records and logs without revealing anything of one.
 */
export function storeKeyId(storeKey: Uint8Array): string {
  return createHash("sha256")
    .update("edgeslice TLS_STORE_KEY id\n")
    .update(storeKey)
    .digest("hex")
    .slice(0, 16);
}

/** What a sealed key is bound to: its cluster and record id. */
export function sealBinding(cluster: string, id: string): string {
  return `${cluster}\n${id}`;
}
