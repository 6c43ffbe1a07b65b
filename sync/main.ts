import { parseArgs } from "node:util";
import * as v from "valibot";
import { createJsonLogger, type Logger } from "../lib/logger.js";
import { ClusterNameSchema } from "../store/names.js";
import { parseSyncConfig, type SyncConfig } from "./config.js";
import { printFromFolder, publishFromFolder } from "./folder.js";
import { runLive } from "./live.js";
import { DEFAULT_ROUTE_SETTINGS } from "./translate/desired-routes.js";
import { parseHostClaims } from "./translate/host-claims.js";

/**
 * `npm run sync`: the sync's entry point. Live mode (live.ts) watches the cluster it runs in; `--from DIR`
 * reads manifests from a folder instead (folder.ts). The exit code is 2 for bad arguments or environment.
 */

const USAGE = `Usage: node dist/sync.js [--from DIR] [--once] [--print]   (development: npm run sync -- ...)

  --from DIR   read manifests (YAML, JSON, Lists) from DIR instead of a cluster: Services, EndpointSlices,
               GatewayClasses, Gateways, HTTPRoutes, ReferenceGrants, Namespaces, IngressClasses, Ingresses
  --once       translate once and exit instead of watching
  --print      print one JSON line per Service port, then one per route, to stdout instead of writing to the store
  --help       show this text

Environment: CLUSTER_NAME (required to write; --print uses "local" when unset), REDIS_URL, EDGESLICE_PREFIX,
WATCH_NAMESPACES, HOST_CLAIMS, SYNC_PORT.`;

/** Name shown in `--print` output when CLUSTER_NAME is unset: printing writes nothing, so no real name is needed. */
const PRINT_DEFAULT_CLUSTER = "local";

interface CliArgs {
  readonly from: string | undefined;
  readonly once: boolean;
  readonly print: boolean;
  readonly help: boolean;
}

function readArgs(argv: readonly string[]): CliArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      from: { type: "string" },
      once: { type: "boolean", default: false },
      print: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    from: values.from,
    once: values.once ?? false,
    print: values.print ?? false,
    help: values.help ?? false,
  };
}

async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const logger = createJsonLogger({
    write: (line) => process.stderr.write(`${line}\n`),
    base: { component: "sync" },
  });
  let args: CliArgs;
  try {
    args = readArgs(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }

  if (args.from !== undefined) {
    if (!args.print) {
      const config = configOrExit(env, logger);
      return config ? publishFromFolder(args.from, config, { logger, once: args.once }) : 2;
    }
    const cluster = env.CLUSTER_NAME ?? PRINT_DEFAULT_CLUSTER;
    if (!v.is(ClusterNameSchema, cluster)) {
      logger.error("CLUSTER_NAME must be a DNS-1123 label (a-z, 0-9, '-')", { cluster });
      return 2;
    }
    const claims = parseHostClaims(env.HOST_CLAIMS);
    if (!claims.ok) {
      logger.error("invalid HOST_CLAIMS", { error: claims.error });
      return 2;
    }
    return printFromFolder(
      args.from,
      cluster,
      { ...DEFAULT_ROUTE_SETTINGS, hostClaims: claims.value },
      logger,
    );
  }

  const config = configOrExit(env, logger);
  if (!config) return 2;
  const liveLogger = createJsonLogger({
    level: config.logLevel,
    write: (line) => process.stderr.write(`${line}\n`),
    base: { component: "sync", cluster: config.cluster, identity: config.identity },
  });
  return runLive(config, { logger: liveLogger });
}

function configOrExit(env: NodeJS.ProcessEnv, logger: Logger): SyncConfig | undefined {
  try {
    return parseSyncConfig(env);
  } catch (error) {
    logger.error((error as Error).message);
    return undefined;
  }
}

process.exitCode = await main(process.argv.slice(2), process.env);
