import * as v from "valibot";
import { versionLine } from "../lib/build-info.js";
import { readCommandLine } from "../lib/command-line.js";
import { ConfigurationError } from "../lib/configuration-error.js";
import { EXIT_CODES } from "../lib/exit-codes.js";
import { createJsonLogger, type Logger } from "../lib/logger.js";
import { ClusterNameSchema } from "../store/names.js";
import { parseSyncConfig, type SyncConfig } from "./config.js";
import { printFromFolder, publishFromFolder } from "./folder.js";
import { loadKubeConfig } from "./kube/kube-config.js";
import { runLive } from "./live.js";
import { retireFromStore } from "./retire.js";
import { DEFAULT_ROUTE_SETTINGS } from "./translate/desired-routes.js";
import { parseHostClaims } from "./translate/host-claims.js";

/**
 * `npm run sync`: the sync's entry point. Live mode (live.ts) watches the cluster it runs in; `--from DIR`
 * reads manifests from a folder instead (folder.ts). Exit codes: lib/exit-codes.ts.
 */

const COMMAND = "node dist/sync.js";

const USAGE = `Usage: ${COMMAND} [--from DIR [--once] [--print] | --retire]   (development: npm run sync -- ...)

  (no flag)    live: watch the cluster of KUBECONFIG (else ~/.kube/config, else the pod's service account)
               and publish it to Redis until SIGTERM
  --from DIR   read manifests (YAML, JSON, Lists) from DIR instead of a cluster: Services, EndpointSlices,
               GatewayClasses, Gateways, HTTPRoutes, ReferenceGrants, Namespaces, IngressClasses, Ingresses,
               Secrets of type kubernetes.io/tls (HTTPS listeners' certificates)
  --once       with --from: publish once and exit instead of keeping the heartbeat going
  --print      with --from: print one JSON line per Service port, then one per route, then one per
               certificate (never its key), to stdout instead of writing to the store
  --retire     remove CLUSTER_NAME from the store for good (its records and registry entry), once no sync of
               it runs: refused, removing nothing, while one holds the cluster's writer fence
  --help       show this text
  --version    print the version, the git revision it was built from and the Node.js version

Environment: CLUSTER_NAME (required to write; --print uses "local" when unset), REDIS_URL, EDGESLICE_PREFIX,
WATCH_NAMESPACES, HOST_CLAIMS, SYNC_PORT (docs/configuration.md lists them all).
Exit status: 0 done or stopped, 1 failed at run time, 2 bad command line, 78 bad setting (environment,
KUBECONFIG, Redis credentials).`;

/** Name shown in `--print` output when CLUSTER_NAME is unset: printing writes nothing, so no real name is needed. */
const PRINT_DEFAULT_CLUSTER = "local";

const FLAGS = {
  from: { type: "string" },
  once: { type: "boolean", default: false },
  print: { type: "boolean", default: false },
  retire: { type: "boolean", default: false },
} as const;

async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const logger = createJsonLogger({
    write: (line) => process.stderr.write(`${line}\n`),
    base: { component: "sync" },
  });
  const line = readCommandLine(argv, {
    command: COMMAND,
    options: FLAGS,
    usage: USAGE,
    version: versionLine(),
    print: (text) => process.stdout.write(text),
    logger,
  });
  if (!line.run) return line.exitCode;
  const { from, once, print, retire } = line.flags;
  if (retire) {
    if (from !== undefined || once || print) {
      logger.error(
        "--retire goes alone: it removes CLUSTER_NAME from the store; drop --from, --once and --print",
      );
      return EXIT_CODES.usage;
    }
    const config = configOrLog(env, logger);
    return config ? retireFromStore(config, logger) : EXIT_CODES.configuration;
  }

  if (from === undefined) {
    if (once || print) {
      logger.error(
        `${once ? "--once" : "--print"} needs --from DIR: without it the sync watches the cluster until stopped; add --from DIR, or drop ${once ? "--once" : "--print"}`,
      );
      return EXIT_CODES.usage;
    }
    return live(env, logger);
  }
  if (!print) {
    const config = configOrLog(env, logger);
    return config ? publishFromFolder(from, config, { logger, once }) : EXIT_CODES.configuration;
  }
  const cluster = env.CLUSTER_NAME ?? PRINT_DEFAULT_CLUSTER;
  if (!v.is(ClusterNameSchema, cluster)) {
    logger.error("CLUSTER_NAME must be a DNS-1123 label (a-z, 0-9, '-')", { cluster });
    return EXIT_CODES.configuration;
  }
  const claims = parseHostClaims(env.HOST_CLAIMS);
  if (!claims.ok) {
    logger.error(`HOST_CLAIMS must be namespace=host,*.suffix,...;namespace=...: ${claims.error}`);
    return EXIT_CODES.configuration;
  }
  return printFromFolder(from, cluster, { ...DEFAULT_ROUTE_SETTINGS, hostClaims: claims.value }, logger, {
    tlsStoreKeySet: (env.TLS_STORE_KEY ?? "").trim() !== "",
  });
}

async function live(env: NodeJS.ProcessEnv, logger: Logger): Promise<number> {
  const config = configOrLog(env, logger);
  if (!config) return EXIT_CODES.configuration;
  let kubeConfig: ReturnType<typeof loadKubeConfig>;
  try {
    kubeConfig = loadKubeConfig(env.KUBECONFIG);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    logger.error(error.message);
    return EXIT_CODES.configuration;
  }
  const liveLogger = createJsonLogger({
    level: config.logLevel,
    write: (line) => process.stderr.write(`${line}\n`),
    base: { component: "sync", cluster: config.cluster, identity: config.identity },
  });
  const exitCode = await runLive(config, { logger: liveLogger, kubeConfig });
  // A start that failed leaves the clients it had opened (Redis) holding the process open.
  if (exitCode !== EXIT_CODES.ok) process.exit(exitCode);
  return exitCode;
}

function configOrLog(env: NodeJS.ProcessEnv, logger: Logger): SyncConfig | undefined {
  try {
    return parseSyncConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    logger.error(error.message);
    return undefined;
  }
}

process.exitCode = await main(process.argv.slice(2), process.env);
