import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A tiny HTTP backend for the all-in-one: it says which pod and which address family answered. */
export interface DemoBackend {
  /** `ip:port` or `[ip]:port`. */
  readonly address: string;
  readonly family: "IPv4" | "IPv6";
  close(): Promise<void>;
}

export interface DemoBackendOptions {
  /** Shown in every answer, e.g. `demo/web`. */
  readonly service: string;
  readonly ip: string;
  /** 0 picks a free port. */
  readonly port: number;
}

/**
 * @example
 * const backend = await startDemoBackend({ service: "demo/web", ip: "127.0.0.1", port: 0 });
 * backend.address;   // "127.0.0.1:<port>"
 * await backend.close();
 */
export async function startDemoBackend(options: DemoBackendOptions): Promise<DemoBackend> {
  const family = options.ip.includes(":") ? "IPv6" : "IPv4";
  let address = "";
  const server = createServer((request, response) => {
    // Drain the request body so keep-alive connections stay usable, then answer.
    request.resume();
    request.on("end", () => {
      const body = `${options.service} answered over ${family} from ${address}: ${request.method} ${request.url} (Host: ${request.headers.host ?? "-"}, X-Forwarded-For: ${request.headers["x-forwarded-for"] ?? "-"})\n`;
      response.writeHead(200, {
        "content-type": "text/plain; charset=utf-8",
        "x-demo-backend": address,
        "x-demo-family": family,
      });
      response.end(body);
    });
  });
  await listen(server, options.ip, options.port);
  // Port 0 (tests) gets a free port: report the one actually bound.
  const port = (server.address() as AddressInfo).port;
  address = family === "IPv6" ? `[${options.ip}]:${port}` : `${options.ip}:${port}`;
  return {
    address,
    family,
    close: () => closeServer(server),
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen({ host, port, ipv6Only: host.includes(":") }, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
