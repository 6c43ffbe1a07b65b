import { createHash, randomBytes } from "node:crypto";
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealBinding, sealKey } from "../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION, type CertificateRecord } from "../../store/certificates.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "../e2e/support/backends.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../e2e/support/contract-layout.js";
import { createTestAuthority } from "../support/certificates.js";
import { type BuiltRouter, type HostileWorld, startHostileWorld, until } from "./support/hostile-world.js";

/**
 * Issue 35 items 2, 5 and 6 on the built router with HTTPS, one ACL user per cluster. Certificates are claims
 * on hosts: `aaa` (not in CLUSTER_GRANTS, first by name) and `evil` (granted evil.test only) publish
 * certificates for pay.test, www.pay.test and a listener without hostname; `east` owns pay.test and shop.test;
 * `west` is granted every host (and sorts after evil) and publishes the default certificate. Each leaf's CN names its Secret.
 */
const CLUSTER_GRANTS = [
  "east=hosts:pay.test,shop.test networks:127.0.0.1/32",
  "evil=hosts:evil.test networks:::1/128",
  "west=hosts:* networks:127.0.0.1/32",
].join(";");
const storeKey = randomBytes(32);
const authority = createTestAuthority();
let world: HostileWorld;
let router: BuiltRouter;
const fleet: BackendFleet = createBackendFleet();
let eastPod: RecordingBackend;

function certificate(cluster: string, id: string, hostnames: string[], anyHost = false): CertificateRecord {
  const leaf = authority.issue([`${id.replace("/", ".")}.cn`, ...hostnames]);
  return {
    v: CERTIFICATE_SCHEMA_VERSION,
    id,
    hostnames,
    ...(anyHost ? { anyHost } : {}),
    version: createHash("sha256").update(leaf.cert).digest("hex"),
    cert: leaf.cert,
    key: sealKey(storeKey, sealBinding(cluster, id), leaf.key),
  };
}

interface TlsAnswer {
  /** The CN of the certificate the router presented ("" when the handshake failed). */
  readonly cn: string;
  /** The status line's code (0 when no answer came). */
  readonly status: number;
  readonly body: string;
}

/** One HTTP/1.1 request over TLS to the router: `servername` undefined sends no SNI; `target` as written. */
function tlsRequest(servername: string | undefined, host: string, target = "/"): Promise<TlsAnswer> {
  return new Promise((resolve) => {
    const socket = connect({
      host: "127.0.0.1",
      port: router.httpsPort ?? 0,
      ...(servername === undefined ? {} : { servername }),
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    });
    let cn = "";
    let raw = "";
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on("secureConnect", () => {
      const subject = socket.getPeerCertificate().subject as { CN?: string } | undefined;
      cn = subject?.CN ?? "";
      socket.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    });
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      raw += chunk;
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      resolve({ cn, status, body: raw.slice(raw.indexOf("\r\n\r\n") + 4) });
    });
  });
}

beforeAll(async () => {
  world = await startHostileWorld(["east", "evil", "aaa", "west"]);
  eastPod = await fleet.start("east", "127.0.0.1");
  for (const cluster of ["east", "evil", "aaa", "west"]) {
    await (await world.writer(cluster)).heartbeat({
      holder: `${cluster}-0`,
      leaseMs: 600_000,
      at: Date.now(),
    });
  }
  const east = await world.writer("east");
  await east.putService(
    serviceRecordV2({
      cluster: "east",
      service: "web/site",
      ports: [{ number: 80, ipv4: [endpoint(eastPod.ip, eastPod.port)] }],
    }),
  );
  for (const host of ["pay.test", "shop.test"]) {
    await east.putRoute(
      routeRecord(`httproute:web/${host}`, {
        hostnames: [host],
        rules: [routeRule([{ service: "web/site", port: 80, weight: 1 }])],
      }),
    );
  }
  const put = async (cluster: string, record: CertificateRecord) =>
    (await world.writer(cluster)).certificates?.putCertificate(record);
  await put("east", certificate("east", "web/pay", ["pay.test"]));
  await put("east", certificate("east", "web/shop", ["shop.test"]));
  await put("aaa", certificate("aaa", "x/pay", ["pay.test"]));
  await put("evil", certificate("evil", "evil/www", ["www.pay.test", "evil.test"]));
  await put("evil", certificate("evil", "evil/any", ["evil.test"], true));
  await put("west", certificate("west", "edge/default", ["edge.test"], true));
  router = await world.startRouter({
    CLUSTER_GRANTS,
    TLS_STORE_KEY: storeKey.toString("base64"),
    HTTPS_PORT: "0",
  });
  await until(
    () => tlsRequest("pay.test", "pay.test"),
    (answer) => answer.status === 200,
  );
  await until(
    () => tlsRequest("edge.test", "edge.test"),
    (answer) => answer.cn !== "",
  );
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await fleet.closeAll();
});

describe("certificates obey CLUSTER_GRANTS (built router)", () => {
  it("serves pay.test with its granted cluster's certificate, never an unlisted cluster's first by name", async () => {
    expect((await tlsRequest("pay.test", "pay.test")).cn).toBe("web.pay.cn");
  });

  it("never serves a host with the certificate of a cluster not granted it", async () => {
    expect((await tlsRequest("www.pay.test", "www.pay.test")).cn).toBe("edge.default.cn");
  });

  it("gives an unknown SNI the default of a cluster granted it, never the hostile listener's", async () => {
    expect((await tlsRequest("unknown.test", "unknown.test")).cn).toBe("edge.default.cn");
  });

  it("still serves the hostile cluster's own host with its own certificate", async () => {
    expect((await tlsRequest("evil.test", "evil.test")).cn).toBe("evil.any.cn");
  });
});

describe("the host a TLS request is routed by (built router)", () => {
  it("answers 421 to an absolute-form target whose authority the connection's SNI did not choose", async () => {
    const answer = await tlsRequest("shop.test", "shop.test", "https://pay.test/");
    expect(answer.status).toBe(421);
    expect(answer.body).toContain("misdirected_request");
    expect((await tlsRequest("pay.test", "shop.test", "https://pay.test/")).status).toBe(200);
  });

  it("routes a client without SNI by its Host over the certificate of a listener without hostname", async () => {
    const answer = await tlsRequest(undefined, "pay.test");
    expect(answer.cn).toBe("edge.default.cn");
    expect(answer.status).toBe(200);
    expect(answer.body).toBe("east");
  });
});
