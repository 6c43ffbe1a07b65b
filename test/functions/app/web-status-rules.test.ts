import { describe, expect, it } from "vitest";
import { publish, serviceRecord } from "../fixtures.js";
import { closeAfterEach, type Router, startNodeRouterOver, startRouter } from "../harness.js";
import {
  metric,
  type RawBackend,
  rawBackend,
  rawExchange,
  statusLineOf,
  until,
} from "../node/hostile-kit.js";

/**
 * Status rules on the web path (web-proxy.ts: fetch on Workers, undici for HEAD on Node), against backends
 * that break them. RFC 9110 §15: a status code is three digits from 100 to 599, so an answer with another is
 * invalid: a 502, counted as the transport's failure. §8.6: a 204 carries no Content-Length; a 304 may (it
 * states the size of the 200 the request would have had), so its own is relayed.
 */
const closing = closeAfterEach();

const WAYS = [
  ["the fetch transport", "GET", (options: object) => startRouter(options)],
  ["Node's HEAD (undici)", "HEAD", (options: object) => startNodeRouterOver(options)],
] as const;

async function routerTo(start: (typeof WAYS)[number][2], backend: RawBackend): Promise<Router> {
  const r: Router = await closing(start({ config: { retries: 0 } }));
  await publish(r.store, serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }));
  return r;
}

const request = (method: string) => `${method} / HTTP/1.1\r\nhost: app.example\r\nconnection: close\r\n\r\n`;

/** The head of a raw reply, its field lines lower-cased. */
function headOf(reply: Buffer): { status: string; fields: string[] } {
  const [status = "", ...fields] = reply.toString("latin1").split("\r\n\r\n")[0]?.split("\r\n") ?? [];
  return { status, fields: fields.map((line) => line.toLowerCase()) };
}

describe.each(WAYS)("the web path over %s", (_way, method, start) => {
  it.each(["600 Beyond", "999 Far Beyond", "700 Odd"])(
    "answers a backend's status %s 502, counted as a transport error",
    async (status) => {
      const b = await closing(rawBackend(Buffer.from(`HTTP/1.1 ${status}\r\ncontent-length: 2\r\n\r\nhi`)));
      const r = await routerTo(start, b);
      const reply = await rawExchange(r.port, request(method));
      expect(statusLineOf(reply)).toBe("HTTP/1.1 502 Bad Gateway");
      expect(await metric(r.adminPort, 'edgeslice_upstream_errors_total{kind="transport"}')).toBe(1);
      await until(
        async () => (await metric(r.adminPort, "edgeslice_in_flight_requests")) === 0,
        "in flight to settle",
      );
    },
  );

  it("relays a 204 without the Content-Length its backend sent", async () => {
    const b = await closing(
      rawBackend(Buffer.from("HTTP/1.1 204 No Content\r\ncontent-length: 5\r\nx-app: 1\r\n\r\n")),
    );
    const r = await routerTo(start, b);
    const { status, fields } = headOf(await rawExchange(r.port, request(method)));
    expect(status).toBe("HTTP/1.1 204 No Content");
    expect(fields).toContain("x-app: 1");
    expect(
      fields.filter((line) => line.startsWith("content-length:") || line.startsWith("transfer-encoding:")),
    ).toEqual([]);
  });

  it("relays a 304 with the Content-Length its backend sent (the size of the 200 it stands for)", async () => {
    const b = await closing(
      rawBackend(Buffer.from('HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\netag: "a"\r\n\r\n')),
    );
    const r = await routerTo(start, b);
    const { status, fields } = headOf(await rawExchange(r.port, request(method)));
    expect(status).toBe("HTTP/1.1 304 Not Modified");
    expect(fields).toContain("content-length: 5");
    expect(fields).toContain('etag: "a"');
  });
});
