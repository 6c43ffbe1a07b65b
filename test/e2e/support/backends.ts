import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A real HTTP backend that answers with its own name and counts the requests that reached it. */
export interface RecordingBackend {
  readonly name: string;
  readonly ip: string;
  readonly port: number;
  /** `ip:port` / `[ip]:port`. */
  readonly address: string;
  hits(): number;
  /** Stops listening and cuts every open connection at once, like a pod that died. */
  kill(): Promise<void>;
}

export interface BackendFleet {
  start(name: string, ip: "127.0.0.1" | "::1"): Promise<RecordingBackend>;
  /** Every backend's name → hits, for "only listed backends were reached" checks. */
  hitsByName(): Map<string, number>;
  closeAll(): Promise<void>;
}

export function createBackendFleet(): BackendFleet {
  const backends: { backend: RecordingBackend; server: Server }[] = [];
  return {
    async start(name, ip) {
      let hits = 0;
      const server = createServer((req, res) => {
        hits++;
        req.resume();
        req.on("end", () => {
          res.setHeader("x-backend", name);
          res.end(name);
        });
      });
      server.listen(0, ip);
      await once(server, "listening");
      const port = (server.address() as AddressInfo).port;
      let killed = false;
      const backend: RecordingBackend = {
        name,
        ip,
        port,
        address: ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`,
        hits: () => hits,
        async kill() {
          if (killed) return;
          killed = true;
          const closed = new Promise((resolve) => server.close(resolve));
          server.closeAllConnections();
          await closed;
        },
      };
      backends.push({ backend, server });
      return backend;
    },
    hitsByName: () => new Map(backends.map(({ backend }) => [backend.name, backend.hits()])),
    async closeAll() {
      await Promise.all(backends.map(({ backend }) => backend.kill()));
    },
  };
}
