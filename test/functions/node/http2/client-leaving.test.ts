import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { publish, serviceRecord } from "../../fixtures.js";
import { closeAfterEach, startBackend, startNodeRouterOver } from "../../harness.js";
import { publishH2c, startH2cBackend } from "../h2c/h2c-kit.js";
import { until } from "../hostile-kit.js";
import { FLAG, FRAME, frame, RawH2, requestBlock } from "./frames.js";

/**
 * An HTTP/2 client on the cleartext PORT that goes away by closing its TCP connection, with no RST_STREAM
 * first (a crashed process, a lost laptop): the backend's side of its requests must be released as when it
 * resets them. Raw frames, so that nothing but the TCP close tells the router.
 */
const closing = closeAfterEach();

const LEAVINGS = [
  ["half-closes its connection (FIN, still reading)", (client: RawH2) => client.socket.end()],
  ["closes its connection", (client: RawH2) => client.socket.destroy()],
] as const;

/** Opens stream 1 (a GET to app.example that ends with its HEADERS). */
async function openStream(port: number): Promise<RawH2> {
  const client = await RawH2.open(port);
  client.write(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, requestBlock("app.example")));
  return client;
}

describe("an HTTP/2 client on the cleartext port that leaves without RST_STREAM", () => {
  it.each(LEAVINGS)("that %s releases the h2c backend's stream within 1 s", async (_how, leave) => {
    let open = 0;
    let arrived = 0;
    const backend = await closing(
      startH2cBackend((stream) => {
        open++;
        arrived++;
        stream.once("close", () => open--);
      }),
    );
    const router = await closing(startNodeRouterOver({ config: { retries: 0 } }));
    await publishH2c(router.store, [backend.port], { protocol: "h2c" });
    const client = await openStream(router.port);
    await until(() => arrived === 1, "the stream at the backend");
    leave(client);
    const left = Date.now();
    await until(() => open === 0, "the backend's stream closed");
    expect(Date.now() - left).toBeLessThan(1_000);
  });

  it.each(LEAVINGS)("that %s releases the HTTP/1.1 backend's connection within 1 s", async (_how, leave) => {
    const held: ServerResponse[] = [];
    let open = 0;
    const backend = await closing(
      startBackend("127.0.0.1", (req, res) => {
        held.push(res);
        open++;
        req.socket.once("close", () => open--);
      }),
    );
    const router = await closing(startNodeRouterOver({ config: { retries: 0 } }));
    await publish(
      router.store,
      serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
    );
    const client = await openStream(router.port);
    await until(() => held.length === 1, "the request at the backend");
    leave(client);
    const left = Date.now();
    await until(() => open === 0, "the backend's connection closed");
    expect(Date.now() - left).toBeLessThan(1_000);
  });
});
