import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import type { ServiceRecord } from "../../../store/records.js";
import { ep, serviceRecord, snapshotOf } from "../fixtures.js";
import { type Backend, send, startBackend } from "../harness.js";

const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const each of closing.splice(0).reverse()) await each.close();
});

const SERVICES = 20_000;

/** Service records that count how many of them have been read by iteration (what a scrape's render does). */
class CountedRecords<V> extends Map<string, V> {
  read = 0;

  override values(): MapIterator<V> {
    const values = super.values();
    const next = () => {
      const step = values.next();
      if (!step.done) this.read++;
      return step;
    };
    return Object.assign(Object.create(values) as MapIterator<V>, { next });
  }
}

/** One routed Service on `backend`, and SERVICES more of one loopback endpoint each that nothing asks for. */
async function routerOverLargeStore(
  backend: Backend,
): Promise<{ router: NodeRouter; records: CountedRecords<unknown> }> {
  const records: ServiceRecord[] = [
    serviceRecord({
      cluster: "east",
      service: "shop/web",
      hosts: ["shop.example.test"],
      ipv4: [ep("127.0.0.1", backend.port)],
    }),
  ];
  for (let i = 0; i < SERVICES; i++) {
    records.push(
      serviceRecord({
        cluster: "east",
        service: `idle/service-${i}`,
        hosts: [`idle-${i}.example.test`],
        ipv4: [ep(`127.1.${i >> 8}.${i & 255}`)],
      }),
    );
  }
  const [view] = snapshotOf([{ name: "east", records }]).clusters;
  if (!view) throw new Error("no cluster view");
  const counted = new CountedRecords([...view.servicesV2]);
  const snapshot = { version: 1, clusters: [{ ...view, servicesV2: counted }] };
  const router = await startNodeRouter(parseRouterConfig({ PORT: "0", ADMIN_TOKEN: "t" }), {
    source: { current: () => snapshot },
    host: "127.0.0.1",
    logger: silentLogger,
    drainMs: 200,
  });
  closing.push(router);
  return { router, records: counted };
}

/** A scrape whose body is read as it comes: `started` once the head and a first chunk arrived. */
function scrape(port: number) {
  let ended = false;
  let text = "";
  let chunks = 0;
  let started: () => void = () => {};
  const first = new Promise<void>((resolve) => (started = resolve));
  const done = new Promise<void>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/_edgeslice/metrics",
        headers: { authorization: "Bearer t" },
        agent: false,
      },
      (res) => {
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          chunks++;
          started();
        });
        res.on("end", () => {
          ended = true;
          resolve();
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
  return { first, done, ended: () => ended, text: () => text, chunks: () => chunks };
}

describe("a metrics scrape of a large store on the Node router", () => {
  it("serves a proxied request that arrives mid-scrape before the scrape has read the whole store", async () => {
    let readWhenProxied = -1;
    let counted: CountedRecords<unknown> | undefined;
    const backend = await startBackend("127.0.0.1", (req, res) => {
      readWhenProxied = counted?.read ?? -1;
      req.resume();
      res.end("ok");
    });
    closing.push(backend);
    const { router, records } = await routerOverLargeStore(backend);
    // The route index is built on the first request, not during the scrape.
    expect((await send(router.port, { headers: { host: "shop.example.test" } })).status).toBe(200);
    records.read = 0;
    counted = records;

    const scraping = scrape(router.adminPort);
    await scraping.first;
    const proxied = await send(router.port, { headers: { host: "shop.example.test" } });
    await scraping.done;

    expect(proxied.status).toBe(200);
    expect(readWhenProxied).toBeGreaterThan(0);
    expect(readWhenProxied).toBeLessThan(SERVICES + 1);
    expect(records.read).toBe(SERVICES + 1);
    expect(scraping.chunks()).toBeGreaterThan(1);
    expect(scraping.text().match(/^edgeslice_backends\{.*$/gm)).toHaveLength((SERVICES + 1) * 4);
  }, 30_000);
});
