import type { IncomingMessage, ServerResponse } from "node:http";
import { publish, serviceRecord } from "../../fixtures.js";
import { type Router, startBackend, startNodeRouterOver } from "../../harness.js";
import { h2Session } from "./h2-client.js";

type Closing = <T extends { close(): Promise<void> }>(started: Promise<T>) => Promise<T>;

/** A backend that answers with the request it saw as JSON, and sets the response fields a test asks for. */
export function echo(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const extra = req.headers["x-answer-with"];
    if (typeof extra === "string") for (const [name, value] of JSON.parse(extra)) res.setHeader(name, value);
    const body = Buffer.concat(chunks).toString();
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
  });
}

/** The Node router (no retries) with app.example routed to a backend answering with `handler`; closed by `closing`. */
export async function routerToBackend(
  closing: Closing,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
) {
  const backend = await closing(startBackend("127.0.0.1", handler));
  const router: Router = await closing(startNodeRouterOver({ config: { retries: 0 } }));
  await publish(
    router.store,
    serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
  );
  return { router, backend };
}

/** The Node router with app.example routed to an echo backend, and an h2c session to it; all closed by `closing`. */
export async function routerToEcho(closing: Closing) {
  const { router, backend } = await routerToBackend(closing, echo);
  const session = h2Session(router.port);
  closing(Promise.resolve({ close: async () => void session.destroy() }));
  return { router, backend, session };
}
