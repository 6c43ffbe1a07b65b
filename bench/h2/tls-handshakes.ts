import { createHash, randomBytes } from "node:crypto";
import { connect } from "node:tls";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { sealBinding, sealKey } from "../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION } from "../../store/certificates.js";
import { DEFAULT_PREFIX } from "../../store/names.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { createTestAuthority } from "../../test/support/certificates.js";
import { freePort } from "../../test/support/redis.js";
import { medianOf } from "../proxy/rounds.js";
import { type Child, cpuMicros, startChild } from "../support/child.js";

const MINIMAL_TLS = fileURLToPath(new URL("./minimal-tls-process.ts", import.meta.url));
/** The name the bench's certificate is for and every handshake asks for (SNI). */
export const TLS_BENCH_HOST = "tls.bench.localhost";
const CLUSTER = "bench";

export interface TlsSetup {
  /** TLS_STORE_KEY and HTTPS_PORT for the router under test. */
  readonly routerEnv: Record<string, string>;
  readonly httpsPort: number;
  readonly minimal: Child;
  readonly minimalPort: number;
}

/**
 * A certificate made now (EC P-256, openssl), published as the sync would publish a Gateway listener's
 * Secret (its key sealed under a fresh TLS_STORE_KEY), and the minimal TLS server started with the same pair.
 */
export async function prepareTlsBench(redisUrl: string, cpu: number | undefined): Promise<TlsSetup> {
  const leaf = createTestAuthority("edgeslice bench CA").issue([TLS_BENCH_HOST]);
  const storeKey = randomBytes(32);
  const id = "bench/tls";
  const client = new Redis(redisUrl);
  try {
    await createRedisWriter(client, {
      prefix: DEFAULT_PREFIX,
      cluster: CLUSTER,
    }).certificates?.putCertificate({
      v: CERTIFICATE_SCHEMA_VERSION,
      id,
      hostnames: [TLS_BENCH_HOST],
      version: createHash("sha256").update(leaf.cert).digest("hex"),
      cert: leaf.cert,
      key: sealKey(storeKey, sealBinding(CLUSTER, id), leaf.key),
    });
  } finally {
    client.disconnect();
  }
  const minimal = startChild(MINIMAL_TLS, {
    cpu,
    env: { BENCH_TLS_CERT: leaf.cert, BENCH_TLS_KEY: leaf.key },
  });
  const { port: minimalPort } = await minimal.next<{ port: number }>("ready", 20_000);
  const httpsPort = await freePort();
  return {
    routerEnv: { TLS_STORE_KEY: storeKey.toString("base64"), HTTPS_PORT: String(httpsPort) },
    httpsPort,
    minimal,
    minimalPort,
  };
}

/** One full handshake (no session resumption), TLS 1.3, closed at once; resolves false when it failed. */
function handshake(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({
      host: "127.0.0.1",
      port,
      servername: TLS_BENCH_HOST,
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    });
    socket.once("secureConnect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Waits until the router serves the bench's certificate (it polls the store for certificates). */
export async function untilHandshakes(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await handshake(port))) {
    if (Date.now() > deadline) throw new Error(`no TLS handshake on port ${port} within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export interface HandshakeRound {
  readonly perSecond: number;
  /** CPU µs (user+system) of the server process per completed handshake. */
  readonly cpuMicros: number;
  readonly failed: number;
}

/** `concurrency` clients in this process, each handshaking back to back for `seconds`. */
export async function handshakeRound(
  port: number,
  server: Child,
  seconds: number,
  concurrency: number,
): Promise<HandshakeRound> {
  const before = await cpuMicros(server);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let done = 0;
  let failed = 0;
  const client = async () => {
    while (performance.now() < deadline) {
      if (await handshake(port)) done++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - started) / 1000;
  const used = (await cpuMicros(server)) - before;
  return { perSecond: done / elapsed, cpuMicros: used / Math.max(1, done), failed };
}

/** The report's lines: handshakes per second and CPU per handshake, medians over rounds, and their ratios. */
export function formatHandshakes(
  edgeslice: readonly HandshakeRound[],
  minimal: readonly HandshakeRound[],
): string[] {
  const median = (rounds: readonly HandshakeRound[], pick: (round: HandshakeRound) => number) =>
    medianOf(rounds.map(pick));
  const line = (name: string, rounds: readonly HandshakeRound[]) =>
    `tls handshakes/s ${name}: ${median(rounds, (r) => r.perSecond).toFixed(0)} (rounds ${rounds
      .map((r) => r.perSecond.toFixed(0))
      .join(" / ")}), CPU ${median(rounds, (r) => r.cpuMicros).toFixed(0)} µs per handshake, ${rounds.reduce(
      (sum, r) => sum + r.failed,
      0,
    )} failed`;
  const rps = median(edgeslice, (r) => r.perSecond) / median(minimal, (r) => r.perSecond);
  const cpu = median(edgeslice, (r) => r.cpuMicros) / median(minimal, (r) => r.cpuMicros);
  return [
    line("edgeslice", edgeslice),
    line("minimal", minimal),
    `tls: edgeslice/minimal handshakes/s ${rps.toFixed(2)}x, CPU per handshake ${cpu.toFixed(2)}x`,
  ];
}
