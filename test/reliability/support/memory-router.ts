import type { NodeRouter } from "../../../functions/node/server.js";
import { MemoryStore } from "../../../store/memory-store.js";
import type { TestBackend } from "./backends.js";
import type { Defer } from "./cleanups.js";
import { serviceRecord } from "./records.js";
import { startTestRouter } from "./router.js";

const DAY_MS = 24 * 3600 * 1000;

/**
 * The Node router over a MemoryStore holding one Service of cluster east that routes `host` to `backends`,
 * with a day-long lease. The backends and the router are stopped after the test.
 */
export async function startRouterOver(
  options: { host: string; service: string; backends: readonly TestBackend[]; env?: Record<string, string> },
  defer: Defer,
): Promise<NodeRouter> {
  for (const backend of options.backends) defer(() => backend.kill());
  const store = new MemoryStore();
  const writer = store.writer("east");
  await writer.put(
    serviceRecord({
      cluster: "east",
      service: options.service,
      host: options.host,
      backends: options.backends,
    }),
  );
  await writer.heartbeat({ holder: "test", leaseMs: DAY_MS, at: Date.now() });
  const router = await startTestRouter({ source: store, env: options.env ?? {} });
  defer(() => router.close());
  return router;
}
