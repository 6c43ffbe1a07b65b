import { isIP, type Server } from "node:net";
import { ConfigurationError } from "./configuration-error.js";

/** The names of the settings a listen address comes from, for the errors: `{ port: "PORT", host: "HOST" }`. */
export interface ListenSettings {
  readonly port: string;
  readonly host: string;
}

/**
 * Listens on `host:port`. What a setting causes is a ConfigurationError naming it and the fix: a host that is
 * no IP address (checked before listening, so nothing is looked up in DNS), an address this machine does not
 * have, a port taken by another process or below 1024 without the privilege. Any other failure is thrown as
 * Node reports it.
 *
 * @example
 * await listenOn(server, { port: 8080, host: "0.0.0.0" }, { port: "PORT", host: "HOST" });
 */
export function listenOn(
  server: Server,
  address: { readonly port: number; readonly host: string },
  settings: ListenSettings,
): Promise<void> {
  const { port, host } = address;
  if (isIP(host) === 0) {
    return Promise.reject(
      new ConfigurationError(
        `${settings.host}=${host} is not an IP address: set it to 0.0.0.0 (every IPv4 address), :: (every address) or one of this machine's addresses`,
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenProblem(error, address, settings));
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

function listenProblem(
  error: NodeJS.ErrnoException,
  { port, host }: { readonly port: number; readonly host: string },
  settings: ListenSettings,
): Error {
  const at = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  switch (error.code) {
    case "EADDRINUSE":
      return new ConfigurationError(
        `${settings.port}=${port}: ${at} is already in use (EADDRINUSE): stop the process that holds it, or choose another ${settings.port}`,
      );
    case "EADDRNOTAVAIL":
      return new ConfigurationError(
        `${settings.host}=${host} is not an address of this machine (EADDRNOTAVAIL): set it to 0.0.0.0, :: or one of its own addresses`,
      );
    case "EACCES":
      return new ConfigurationError(
        `${settings.port}=${port}: listening on ${at} is not permitted (EACCES): choose a port above 1023`,
      );
    case "EAFNOSUPPORT":
      return new ConfigurationError(
        `${settings.host}=${host}: this machine has no such address family (EAFNOSUPPORT): set it to 0.0.0.0 where IPv6 is off`,
      );
    default:
      return error;
  }
}
