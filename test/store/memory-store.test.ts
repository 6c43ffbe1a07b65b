import { MemoryStore } from "../../store/memory-store.js";
import { describeStoreContract } from "./store.case.js";

describeStoreContract("MemoryStore", async () => {
  const store = new MemoryStore();
  return {
    writer: (cluster, fence) => store.writer(cluster, fence),
    source: store,
    certificates: store,
    backendTls: store.backendTls,
    hostIndex: async (cluster) => store.hostIndex(cluster),
    cannot: {
      writeRawRecord: "MemoryStore serialises every record itself: nothing can put a malformed one in",
      hideUnregisteredClusters:
        "MemoryStore lists a cluster from its first writer() call, heartbeat or not (Redis only once it beat)",
    },
    close: async () => {},
  };
});
