import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A certificate and its key in PEM, as a `kubernetes.io/tls` Secret holds them (tls.crt, tls.key). */
export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

export interface TestAuthority extends TestCertificate {
  /**
   * A leaf for `names` (DNS SANs, wildcards allowed; a name with `://` is a URI SAN, a SPIFFE id say), signed by
   * this authority; its CN is the first name.
   */
  issue(names: readonly string[], days?: number): TestCertificate;
}

const OPENSSL = "/usr/bin/openssl";

function openssl(args: readonly string[], cwd: string): void {
  execFileSync(OPENSSL, args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * A fresh certificate authority (EC P-256, made at test time with the openssl CLI) that issues leaf
 * certificates with the SANs a test asks for. Nothing is written outside a temporary folder.
 */
export function createTestAuthority(name = "edgeslice test CA"): TestAuthority {
  const dir = mkdtempSync(join(tmpdir(), "edgeslice-ca-"));
  try {
    openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key"], dir);
    openssl(
      ["req", "-x509", "-new", "-key", "ca.key", "-subj", `/CN=${name}`, "-days", "2", "-out", "ca.crt"],
      dir,
    );
    const cert = readFileSync(join(dir, "ca.crt"), "utf8");
    const key = readFileSync(join(dir, "ca.key"), "utf8");
    return { cert, key, issue: (names, days = 2) => issueLeaf(cert, key, names, days) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function issueLeaf(caCert: string, caKey: string, names: readonly string[], days: number): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), "edgeslice-leaf-"));
  try {
    writeFileSync(join(dir, "ca.crt"), caCert);
    writeFileSync(join(dir, "ca.key"), caKey);
    writeFileSync(
      join(dir, "ext.cnf"),
      `subjectAltName=${names.map((n) => (n.includes("://") ? `URI:${n}` : `DNS:${n}`)).join(",")}\n`,
    );
    openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "leaf.ec"], dir);
    // PKCS#8, as cert-manager writes tls.key by default for ECDSA keys.
    openssl(["pkcs8", "-topk8", "-nocrypt", "-in", "leaf.ec", "-out", "leaf.key"], dir);
    const subject = `/CN=${(names[0] ?? "leaf").replace("*", "wildcard")}`;
    openssl(["req", "-new", "-key", "leaf.key", "-subj", subject, "-out", "leaf.csr"], dir);
    openssl(
      [
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        String(days),
        "-extfile",
        "ext.cnf",
        "-out",
        "leaf.crt",
      ],
      dir,
    );
    return {
      cert: readFileSync(join(dir, "leaf.crt"), "utf8"),
      key: readFileSync(join(dir, "leaf.key"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A Secret manifest of type kubernetes.io/tls holding `certificate`. */
export function tlsSecret(
  namespace: string,
  name: string,
  certificate: TestCertificate,
  type = "kubernetes.io/tls",
) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace, name },
    type,
    data: {
      "tls.crt": Buffer.from(certificate.cert).toString("base64"),
      "tls.key": Buffer.from(certificate.key).toString("base64"),
    },
  };
}
