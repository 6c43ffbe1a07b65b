import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { UpstreamConnectError, type UpstreamRequest } from "../../../functions/transports/upstream.js";
import { freePort } from "../../support/redis.js";
import { type Backend, startBackend } from "../harness.js";

const started: Backend[] = [];
afterEach(async () => {
  for (const b of started.splice(0)) await b.close();
});

function requestTo(port: number, host = "127.0.0.1", path = "/"): UpstreamRequest {
  return {
    target: { ip: host, port },
    method: "GET",
    path,
    headers: new Headers(),
    body: null,
    signal: new AbortController().signal,
  };
}

describe("createFetchUpstream", () => {
  it("rejects with UpstreamConnectError when the backend refuses the connection", async () => {
    const upstream = createFetchUpstream(fetch);
    await expect(upstream.send(requestTo(await freePort()))).rejects.toBeInstanceOf(UpstreamConnectError);
  });

  it("does not follow redirects", async () => {
    const b = await startBackend("127.0.0.1", (_req, res) => {
      res.writeHead(301, { location: "/elsewhere" });
      res.end();
    });
    started.push(b);
    const res = await createFetchUpstream(fetch).send(requestTo(b.port));
    expect([res.status, res.headers.get("location"), b.seen.length]).toEqual([301, "/elsewhere", 1]);
  });

  it("drops Content-Encoding when fetch already decoded the body", async () => {
    const b = await startBackend("127.0.0.1", (_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip" });
      res.end(gzipSync("hello"));
    });
    started.push(b);
    const res = await createFetchUpstream(fetch).send(requestTo(b.port));
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(await res.text()).toBe("hello");
  });

  it("sends to IPv6 targets in brackets with the origin-form path", async () => {
    const b = await startBackend("::1");
    started.push(b);
    const res = await createFetchUpstream(fetch).send(requestTo(b.port, "::1", "/p?q=1"));
    expect(await res.text()).toBe("ok GET /p?q=1");
  });
});
