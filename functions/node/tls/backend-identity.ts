import { checkServerIdentity, type PeerCertificate } from "node:tls";
import type { BackendTlsPolicyRecord, SubjectAltName } from "../../../store/backend-tls.js";

/** Node's checkServerIdentity signature: undefined when the certificate names the backend the policy wants. */
export type IdentityCheck = (servername: string, certificate: PeerCertificate) => Error | undefined;

/**
 * The name check of a BackendTLSPolicy (Gateway API v1 BackendTLSPolicyValidation), run once the chain was
 * verified against the policy's roots: without subjectAltNames the certificate must match `hostname` (RFC 6125
 * DNS-ID, as Node checks it: its DNS SANs, the subject CN only when it has no SAN at all); with them `hostname`
 * is the SNI only, and the certificate must carry at least one of the listed names: a Hostname one as a
 * DNS SAN (wildcards as a certificate may use them), a URI one (a SPIFFE id, say) as a URI SAN, exactly.
 */
export function backendIdentityCheck(
  policy: Pick<BackendTlsPolicyRecord, "hostname" | "subjectAltNames">,
): IdentityCheck {
  const { hostname, subjectAltNames } = policy;
  if (subjectAltNames.length === 0)
    return (_servername, certificate) => checkServerIdentity(hostname, certificate);
  return (_servername, certificate) => {
    if (subjectAltNames.some((name) => carries(certificate, name))) return undefined;
    const wanted = subjectAltNames.map((name) =>
      name.type === "URI" ? `URI:${name.uri}` : `DNS:${name.hostname}`,
    );
    return Object.assign(
      new Error(
        `backend certificate carries none of the policy's subjectAltNames (${wanted.join(", ")}); it has ${certificate.subjectaltname ?? "none"}`,
      ),
      { code: "ERR_TLS_CERT_ALTNAME_INVALID", reason: "no subjectAltName of the policy", cert: certificate },
    );
  };
}

function carries(certificate: PeerCertificate, name: SubjectAltName): boolean {
  if (name.type === "Hostname") return checkServerIdentity(name.hostname, certificate) === undefined;
  return subjectAltNameEntries(certificate.subjectaltname).some((entry) => entry === `URI:${name.uri}`);
}

/**
 * The entries of Node's `subjectaltname` string (`DNS:a, URI:spiffe://b`), each `TYPE:value`. Node writes a
 * value holding a comma, quote or other special character as a JSON string (`URI:"x,y"`): read back as is.
 */
export function subjectAltNameEntries(altNames: string | undefined): string[] {
  if (altNames === undefined || altNames === "") return [];
  const entries: string[] = [];
  let start = 0;
  let quoted = false;
  for (let at = 0; at < altNames.length; at++) {
    const char = altNames[at];
    if (quoted && char === "\\") at++;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && char === "," && altNames[at + 1] === " ") {
      entries.push(unquoted(altNames.slice(start, at)));
      start = at + 2;
      at++;
    }
  }
  entries.push(unquoted(altNames.slice(start)));
  return entries;
}

function unquoted(entry: string): string {
  const colon = entry.indexOf(":");
  const value = entry.slice(colon + 1);
  if (colon < 0 || !value.startsWith('"')) return entry;
  try {
    return `${entry.slice(0, colon)}:${JSON.parse(value) as string}`;
  } catch {
    return entry;
  }
}
