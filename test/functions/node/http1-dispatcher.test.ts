import { afterEach, describe, expect, it } from "vitest";
import { Http1Dispatcher } from "../../../functions/node/http1-dispatcher.js";
import { httpBackend, sendVia, type TestBackend, until } from "../../lib/http1/client-kit.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function pools(options: ConstructorParameters<typeof Http1Dispatcher>[0] = {}): Http1Dispatcher {
  const created = new Http1Dispatcher(options);
  cleanups.push(async () => created.destroy());
  return created;
}

async function backend(started: Promise<TestBackend>): Promise<TestBackend> {
  const b = await started;
  cleanups.push(() => b.close());
  return b;
}

const at = (b: TestBackend) => ({ ip: "127.0.0.1", port: b.port });

// What every transport shares is in test/functions/transports/transport.case.ts (own-client.contract.test.ts).
describe("the HTTP/1.1 dispatcher's pools of backend connections", () => {
  it("closes a backend's pool and its idle connections once unused for idlePoolMs", async () => {
    const b = await backend(httpBackend((_req, res) => res.end("ok")));
    const c = pools({ idlePoolMs: 50 });
    expect((await sendVia(c.poolFor(at(b))).done).body).toBe("ok");
    expect(c.size).toBe(1);
    await until(async () => c.size === 0, "the idle pool to close");
    await until(async () => b.open() === 0, "its connection to close");
    expect(b.connections).toBe(1);
    expect((await sendVia(c.poolFor(at(b))).done).body).toBe("ok");
  });
});
