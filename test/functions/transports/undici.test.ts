import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createUndiciUpstream, type UndiciUpstream } from "../../../functions/transports/undici.js";
import { upstreamRequest } from "./transport.case.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];
const upstreams: UndiciUpstream[] = [];

async function backend(host: string, handler: Handler): Promise<{ ip: string; port: number }> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, host);
  await once(server, "listening");
  return { ip: host, port: (server.address() as AddressInfo).port };
}

function upstream(options: Parameters<typeof createUndiciUpstream>[0] = {}): UndiciUpstream {
  const created = createUndiciUpstream(options);
  upstreams.push(created);
  return created;
}

/** Resolves when `predicate` holds, polling; bounded. */
async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

afterEach(async () => {
  for (const created of upstreams.splice(0)) await created.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

// What every transport shares is in transport.case.ts (undici.contract.test.ts); these are undici's own.
describe("undici upstream", () => {
  it("buffers a small known-length response when asked to, with the same bytes", async () => {
    const target = await backend("127.0.0.1", (_req, res) => {
      res.setHeader("content-length", "5");
      res.end("small");
    });

    const response = await upstream({ bufferResponseBytes: 1024 }).send(upstreamRequest(target));

    expect(await response.text()).toBe("small");
  });

  it("keeps one pool per backend and closes it once idle", async () => {
    const target = await backend("127.0.0.1", (_req, res) => {
      res.end("ok");
    });
    const created = upstream({ idlePoolMs: 50 });

    for (let i = 0; i < 3; i++) {
      await (await created.send(upstreamRequest(target))).text();
      // The socket returns to the pool once undici has parsed the end of the message.
      await new Promise((resolve) => setImmediate(resolve));
    }

    expect(created.poolCount()).toBe(1);
    await until(() => created.poolCount() === 0, "the idle pool to close");
  });
});
