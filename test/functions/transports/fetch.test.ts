import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { type Backend, startBackend } from "../harness.js";
import { upstreamRequest } from "./transport.case.js";

// What every transport shares is in transport.case.ts (fetch.contract.test.ts); these are fetch's own.

const started: Backend[] = [];
afterEach(async () => {
  for (const b of started.splice(0)) await b.close();
});

describe("createFetchUpstream", () => {
  it("drops Content-Encoding when fetch already decoded the body", async () => {
    const b = await startBackend("127.0.0.1", (_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip" });
      res.end(gzipSync("hello"));
    });
    started.push(b);
    const res = await createFetchUpstream(fetch).send(upstreamRequest({ ip: "127.0.0.1", port: b.port }));
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(await res.text()).toBe("hello");
  });
});
