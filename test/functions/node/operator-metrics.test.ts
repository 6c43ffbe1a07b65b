import { connect as connectHttp2 } from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { endpointOn, publish, serviceRecord } from "../fixtures.js";
import { type Backend, type Router, send, startBackend, startNodeRouterOver } from "../harness.js";

/** The series operators look for (issue 38 item 4), scraped from the built Node router's admin port. */
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function routerTo(backend: Backend): Promise<Router> {
  const router = await startNodeRouterOver();
  open.push(router);
  await publish(router.store, serviceRecord({ cluster: "a", ...endpointOn(backend) }));
  return router;
}

async function scrape(router: Router): Promise<string> {
  const answer = await send(router.adminPort, {
    path: "/_edgeslice/metrics",
    headers: { authorization: "Bearer secret-token" },
  });
  return answer.body;
}

/** The value of the one sample whose line starts with `prefix` (name and labels), or undefined. */
function sample(text: string, prefix: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("operator metrics", () => {
  it("count requests by route and rule, body bytes both ways, and the whole exchange's time beside the head's", async () => {
    const backend = await startBackend("127.0.0.1", (req, res) => {
      req.resume();
      req.on("end", () => res.end("twelve bytes"));
    });
    open.push(backend);
    const router = await routerTo(backend);
    expect((await send(router.port, { method: "POST", body: "hello" })).status).toBe(200);
    expect((await send(router.port, {})).status).toBe(200);
    const text = await scrape(router);
    const route = text.match(/edgeslice_route_requests_total\{route="([^"]+)",rule="0",code="200"\} 2/);
    expect(route?.[1]).toBeDefined();
    const labels = '{service="default/app",cluster="a"}';
    expect(sample(text, `edgeslice_request_bytes_total${labels}`)).toBe(5);
    expect(sample(text, `edgeslice_response_bytes_total${labels}`)).toBe(24);
    expect(sample(text, `edgeslice_request_total_seconds_count${labels}`)).toBe(2);
    expect(text).toContain("edgeslice_request_duration_seconds_count");
  });

  it("show open client connections and HTTP/2 streams per listener while they are open", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const backend = await startBackend("127.0.0.1", (req, res) => {
      req.resume();
      void held.then(() => res.end("late"));
    });
    open.push(backend);
    const router = await routerTo(backend);
    const session = connectHttp2(`http://127.0.0.1:${router.port}`);
    const stream = session.request({ ":path": "/", ":authority": "app.example" });
    stream.end();
    stream.resume();
    const done = new Promise<void>((resolve) => stream.on("close", () => resolve()));
    for (let i = 0; i < 100 && backend.seen.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const during = await scrape(router);
    // The HTTP/2 session on PORT; the scrape itself is on the admin port.
    expect(sample(during, 'edgeslice_client_connections{listener="http"}')).toBe(1);
    expect(sample(during, 'edgeslice_http2_streams{listener="http"}')).toBe(1);
    expect(sample(during, 'edgeslice_client_connections{listener="https"}')).toBe(0);
    release();
    await done;
    await new Promise<void>((resolve) => session.close(() => resolve()));
    for (let i = 0; i < 100; i++) {
      if (sample(await scrape(router), 'edgeslice_client_connections{listener="http"}') === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const after = await scrape(router);
    expect(sample(after, 'edgeslice_client_connections{listener="http"}')).toBe(0);
    expect(sample(after, 'edgeslice_http2_streams{listener="http"}')).toBe(0);
  });
});
