import { createJsonLogger } from "../../../lib/logger.js";
import { parseSyncConfig } from "../../../sync/config.js";
import { startLive } from "../../../sync/live.js";
import { fakeKubeConfig } from "../../fake-kube/server.js";

/**
 * The real sync (`startLive`: informers, reconciler, Redis writer, heartbeat) in a child process, so a test can
 * SIGKILL it like a crashed pod: no graceful stop, no lease released. Env: TEST_KUBE_URL, TEST_KUBE_TOKEN and
 * the sync's own variables. Sends {type: "publishing"} over IPC once it publishes.
 */
const kubeUrl = process.env.TEST_KUBE_URL;
const kubeToken = process.env.TEST_KUBE_TOKEN;
if (!kubeUrl || !kubeToken) throw new Error("TEST_KUBE_URL and TEST_KUBE_TOKEN must be set");
const kubeConfig = fakeKubeConfig(kubeUrl, kubeToken);
const config = parseSyncConfig(process.env, () => `sync-${process.pid}`);
const logger = createJsonLogger({ level: "error", write: (line) => process.stderr.write(`${line}\n`) });
const live = await startLive(config, { logger, kubeConfig });
const deadline = Date.now() + 30_000;
while (!live.publishing() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
process.send?.({ type: live.publishing() ? "publishing" : "not-publishing" });
process.on("disconnect", () => {
  void live.stop().finally(() => process.exit(0));
});
