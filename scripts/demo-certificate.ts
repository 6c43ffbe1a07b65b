import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

/** A certificate and its private key in PEM, as a `kubernetes.io/tls` Secret holds them (tls.crt, tls.key). */
export interface DemoCertificate {
  readonly cert: string;
  readonly key: string;
}

const DAY_MS = 86_400_000;

/**
 * A self-signed X.509 v3 certificate (RFC 5280) for `names` (its DNS subjectAltNames; the first is also its
 * CN), on a fresh EC P-256 key, valid from an hour ago for `days`: what `npm start -- --https` serves its demo
 * with. Node can sign but not build certificates, so the DER is written here; nothing but node:crypto is used.
 *
 * @example const { cert, key } = demoCertificate(["localhost", "*.localhost"]);
 */
export function demoCertificate(names: readonly string[], days = 7, now = Date.now()): DemoCertificate {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const name = distinguishedName(names[0] ?? "edgeslice demo");
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // version: v3
    integer(serialNumber()),
    ECDSA_WITH_SHA256,
    name, // issuer: self-signed
    sequence(utcTime(new Date(now - DAY_MS / 24)), utcTime(new Date(now + days * DAY_MS))),
    name, // subject
    publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(subjectAltName(names), extendedKeyUsageServerAuth())),
  );
  const certificate = sequence(tbs, ECDSA_WITH_SHA256, bitString(sign("sha256", tbs, privateKey)));
  return {
    cert: pem("CERTIFICATE", certificate),
    key: String(privateKey.export({ type: "pkcs8", format: "pem" })),
  };
}

// ASN.1 DER (ITU-T X.690): each value is tag, length, content.
function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), content]);
}

function sequence(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tlv(0x31, Buffer.concat(items));
}

function explicit(tagNumber: number, content: Buffer): Buffer {
  return tlv(0xa0 | tagNumber, content);
}

/** A non-negative INTEGER: a leading zero keeps a high first bit from reading as a sign. */
function integer(bytes: Buffer): Buffer {
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function bitString(bytes: Buffer): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([0]), bytes]));
}

function octetString(bytes: Buffer): Buffer {
  return tlv(0x04, bytes);
}

function objectIdentifier(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const base128: number[] = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) base128.unshift(0x80 | (value & 0x7f));
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime, YYMMDDHHMMSSZ: RFC 5280 §4.1.2.5.1 for dates through 2049. */
function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, "").slice(2, 14);
  return tlv(0x17, Buffer.from(`${text}Z`, "ascii"));
}

/** ecdsa-with-SHA256 (RFC 5758 §3.2): the signature algorithm, with no parameters. */
const ECDSA_WITH_SHA256 = sequence(objectIdentifier("1.2.840.10045.4.3.2"));

function distinguishedName(commonName: string): Buffer {
  return sequence(set(sequence(objectIdentifier("2.5.4.3"), tlv(0x0c, Buffer.from(commonName, "utf8")))));
}

/** subjectAltName (RFC 5280 §4.2.1.6): each name a dNSName, [2] IMPLICIT IA5String. */
function subjectAltName(names: readonly string[]): Buffer {
  const general = names.map((name) => tlv(0x82, Buffer.from(name, "ascii")));
  return sequence(objectIdentifier("2.5.29.17"), octetString(sequence(...general)));
}

/** extKeyUsage (RFC 5280 §4.2.1.12): id-kp-serverAuth. */
function extendedKeyUsageServerAuth(): Buffer {
  return sequence(
    objectIdentifier("2.5.29.37"),
    octetString(sequence(objectIdentifier("1.3.6.1.5.5.7.3.1"))),
  );
}

/** 16 random bytes, positive and not starting with a zero byte (RFC 5280 §4.1.2.2: at most 20 octets). */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return bytes;
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
