/**
 * How every edgeslice command ends (docs/troubleshooting.md, "Exit codes and error lines"), so a script or a supervisor can tell a mistake to
 * fix from a failure that a retry may cure.
 */
export const EXIT_CODES = {
  /** Done, or stopped by SIGTERM/SIGINT. */
  ok: 0,
  /** A failure at run time (Redis unreachable for `--once`, an unreadable folder): trying again may work. */
  failure: 1,
  /** The command line is wrong: an unknown flag, a flag without its value, flags that do not go together. */
  usage: 2,
  /**
   * A setting is wrong (EX_CONFIG of sysexits.h): an environment variable, KUBECONFIG, an address to listen
   * on, the credentials in REDIS_URL. Restarting with the same settings fails the same way.
   */
  configuration: 78,
} as const;
