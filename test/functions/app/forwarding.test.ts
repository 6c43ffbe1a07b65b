import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import type { UpstreamRequest } from "../../../functions/transports/upstream.js";
import { publish, serviceRecord } from "../fixtures.js";
import { ROUTER_KINDS, send, sendRaw } from "../harness.js";
import { appTestKit, at, deferred, withTimeout } from "./kit.js";

/** What the app forwards on both proxy paths: streamed bodies, header rules, Host, redirects. */
const { backend, routerOf } = appTestKit();

describe.each(ROUTER_KINDS)("%s", (kind) => {
  const router = routerOf(kind);

  describe("proxy semantics", () => {
    it("streams the request body: the backend sees the first chunk before the client sends the rest", async () => {
      const firstChunkArrived = deferred();
      const b = await backend("127.0.0.1", (req, res) => {
        let body = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => {
          body += chunk;
          firstChunkArrived.resolve();
        });
        req.on("end", () => res.end(`got ${body}`));
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const response = new Promise<string>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: r.port,
            method: "POST",
            path: "/upload",
            headers: { host: "app.example" },
          },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => (text += c));
            res.on("end", () => resolve(text));
          },
        );
        req.on("error", reject);
        req.write("first,");
        withTimeout(firstChunkArrived.promise, 5_000, "first chunk at the backend").then(
          () => req.end("second"),
          (error: Error) => req.destroy(error),
        );
      });
      expect(await response).toBe("got first,second");
    });

    it("streams the response body: the client gets the first chunk before the backend ends", async () => {
      const clientGotFirst = deferred();
      const b = await backend("127.0.0.1", (_req, res) => {
        res.write("first,");
        withTimeout(clientGotFirst.promise, 5_000, "first chunk at the client").then(
          () => res.end("second"),
          () => res.destroy(),
        );
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const body = await new Promise<string>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port: r.port, path: "/", headers: { host: "app.example" } },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => {
              text += c;
              clientGotFirst.resolve();
            });
            res.on("end", () => resolve(text));
          },
        );
        req.on("error", reject);
        req.end();
      });
      expect(body).toBe("first,second");
    });

    it("strips hop-by-hop and Connection-listed headers in both directions", async () => {
      const b = await backend("127.0.0.1", (req, res) => {
        req.resume();
        res.setHeader("x-internal", "1");
        res.setHeader("connection", "x-internal");
        res.setHeader("proxy-authenticate", "Basic");
        res.setHeader("x-app", "kept");
        res.end("ok");
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const res = await send(r.port, {
        headers: {
          connection: "x-secret",
          "x-secret": "1",
          "keep-alive": "timeout=5",
          te: "trailers",
          "proxy-authorization": "Basic Zm9vOmJhcg==",
          "x-client": "kept",
        },
      });
      expect(res.status).toBe(200);
      const seen = b.seen[0]?.headers ?? {};
      for (const name of ["x-secret", "keep-alive", "te", "proxy-authorization"])
        expect(seen[name]).toBeUndefined();
      expect(seen["x-client"]).toBe("kept");
      expect(res.headers["x-internal"]).toBeUndefined();
      expect(res.headers["proxy-authenticate"]).toBeUndefined();
      expect(res.headers["x-app"]).toBe("kept");
    });

    it("drops Expect", async () => {
      const b = await backend("127.0.0.1");
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const reply = await sendRaw(
        r.port,
        "PUT /e HTTP/1.1\r\nHost: app.example\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
      );
      expect(reply).toContain("ok PUT /e");
      expect(b.seen[0]?.headers.expect).toBeUndefined();
    });

    it("replaces an untrusted client's X-Forwarded-For/-Proto/-Host and Forwarded by its own", async () => {
      const b = await backend("127.0.0.1");
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      await send(r.port, {
        headers: { "x-forwarded-for": "203.0.113.9", "x-forwarded-host": "evil.example" },
      });
      const seen = b.seen[0]?.headers ?? {};
      expect(seen["x-forwarded-for"]).toBe("127.0.0.1");
      expect(seen["x-forwarded-proto"]).toBe("http");
      expect(seen["x-forwarded-host"]).toBe("app.example");
      expect(seen.forwarded).toBe("for=127.0.0.1;host=app.example;proto=http");
    });

    // A transport of the web path's (Workers' fetch); the Node router has its own dispatchers.
    it.runIf(kind === "web path (fetch transport)")(
      "keeps the original Host in the headers handed to the transport",
      async () => {
        const b = await backend("127.0.0.1");
        const hosts: (string | null)[] = [];
        const fetchUpstream = createFetchUpstream(fetch);
        const recording = {
          send: (req: UpstreamRequest) => {
            hosts.push(req.headers.get("host"));
            return fetchUpstream.send(req);
          },
        };
        const r = await router({ upstream: recording });
        await publish(r.store, serviceRecord({ cluster: "a", hosts: ["app.example"], ipv4: [at(b)] }));
        const res = await send(r.port, { headers: { host: "App.Example:8080" } });
        expect(res.status).toBe(200);
        // Host names are case-insensitive (RFC 9110 §4.2.3); the URL parser lower-cases them.
        expect(hosts).toEqual(["app.example:8080"]);
      },
    );

    it("passes redirects through instead of following them", async () => {
      const elsewhere = await backend("127.0.0.1");
      const b = await backend("127.0.0.1", (req, res) => {
        req.resume();
        res.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/target` });
        res.end();
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const res = await send(r.port, {});
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(`http://127.0.0.1:${elsewhere.port}/target`);
      expect(elsewhere.seen).toHaveLength(0);
    });
  });
});
