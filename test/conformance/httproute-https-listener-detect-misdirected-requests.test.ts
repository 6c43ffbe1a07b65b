import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import {
  httpsBaseObjects,
  startTlsConformance,
  type TlsConformance,
  untilTrue,
} from "./support/tls-fixture.js";

/**
 * Conformance HTTPRouteHTTPSListenerDetectMisdirectedRequests (gateway-api v1.6.1, extended feature
 * GatewayHTTPSListenerDetectMisdirectedRequests): the base Gateway's four HTTPS listeners share one certificate,
 * one route attached to each; over HTTP/2 and TLS with the SNI and Host of each case, a host the listener the
 * SNI chose does not serve is answered 421 (RFC 9110 §15.5.20), whatever certificate it would get.
 */
const GATEWAY = "same-namespace-with-https-listener";
const PATH = "/detect-misdirected-requests";

function attached(name: string, sectionName: string, target: string, hostnames?: string[]) {
  return httpRouteObject(name, {
    parentRefs: [{ name: GATEWAY, sectionName }],
    ...(hostnames ? { hostnames } : {}),
    rules: [{ matches: [prefixMatch(PATH)], backendRefs: [backend(target)] }],
  });
}

const CASES: [serverName: string, host: string, status: number, backend?: string][] = [
  ["example.org", "example.org", 200, "infra-backend-v1"],
  ["example.org", "second-example.org", 421],
  ["example.org", "unknown-example.org", 404],
  ["second-example.org", "second-example.org", 200, "infra-backend-v2"],
  ["second-example.org", "example.org", 421],
  ["second-example.org", "unknown-example.org", 421],
  ["third-example.wildcard.org", "third-example.wildcard.org", 200, "infra-backend-v3"],
  ["third-example.wildcard.org", "fith-example.wildcard.org", 200, "infra-backend-v3"],
  ["third-example.wildcard.org", "fourth-example.wildcard.org", 421],
  ["third-example.wildcard.org", "second-example.org", 421],
  ["third-example.wildcard.org", "unknown-example.org", 421],
  ["fourth-example.wildcard.org", "fourth-example.wildcard.org", 200, "infra-backend-v1"],
  ["fourth-example.wildcard.org", "fith-example.wildcard.org", 421],
  ["unknown-example.org", "example.org", 200, "infra-backend-v1"],
  ["unknown-example.org", "unknown-example.org", 404],
];

describe("HTTPRouteHTTPSListenerDetectMisdirectedRequests", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "misdirected",
      objects: [
        ...httpsBaseObjects(),
        attached("https-listener-detect-misdirected-requests-test-1", "https", "infra-backend-v1", [
          "example.org",
        ]),
        attached(
          "https-listener-detect-misdirected-requests-test-2",
          "https-with-hostname",
          "infra-backend-v2",
        ),
        attached(
          "https-listener-detect-misdirected-requests-test-3",
          "https-with-wildcard-hostname",
          "infra-backend-v3",
        ),
        attached(
          "https-listener-detect-misdirected-requests-test-4",
          "https-with-hostname-matching-wildcard",
          "infra-backend-v1",
        ),
      ],
    });
    // Every route is served once its own SNI and Host reach its backend.
    for (const [serverName, host, status] of CASES) {
      if (status !== 200 || serverName !== host) continue;
      await untilTrue(
        () => world.curl({ sni: serverName, host, path: PATH, http2: true }),
        (answer) => answer.status === 200,
      );
    }
  }, 90_000);
  afterAll(async () => {
    await world?.stop();
  });

  it.each(CASES)("SNI %s, Host %s: %i %s", async (serverName, host, status, target) => {
    const answer = await world.curl({ sni: serverName, host, path: PATH, http2: true });
    expect(answer.httpVersion).toBe("2");
    expect(answer.status).toBe(status);
    if (target) expect(answer.body).toContain(`gateway-conformance-infra/${target}`);
  });
});
