import { afterEach } from "vitest";
import {
  type ClusterWatch,
  type ClusterWatchOptions,
  createClusterWatch,
} from "../../../sync/kube/cluster-watch.js";
import { type FakeKube, type FakeKubeOptions, startFakeKube } from "../../fake-kube/server.js";
import { eventually } from "../../support/eventually.js";
import { type LogEntry, recordingLogger } from "../../support/loggers.js";

/** A cluster watch over its own fake API server, with what it reported. */
export interface Harness {
  kube: FakeKube;
  watch: ClusterWatch;
  changes: string[];
  errors: unknown[];
  logs: LogEntry[];
}

/**
 * Registers an afterEach that stops every watch and fake API server of the test, and returns `setUp`, which
 * starts a fake API server (seeded by `seed`) and creates, without starting it, a watch with short retry,
 * watch timeout and stall grace; `track` adds a harness built by hand.
 */
export function clusterWatches(): {
  setUp: (
    seed?: (kube: FakeKube) => void,
    overrides?: Partial<ClusterWatchOptions>,
    kubeOptions?: FakeKubeOptions,
  ) => Promise<Harness>;
  track: (harness: Harness) => void;
} {
  const running: Harness[] = [];
  afterEach(async () => {
    for (const harness of running.splice(0)) {
      await harness.watch.stop().catch(() => {});
      await harness.kube.close();
    }
  });
  return {
    async setUp(seed = () => {}, overrides = {}, kubeOptions = { bookmarkIntervalMs: 50 }) {
      const kube = await startFakeKube(kubeOptions);
      seed(kube);
      const { logger, entries } = recordingLogger();
      const changes: string[] = [];
      const errors: unknown[] = [];
      const watch = createClusterWatch({
        kubeConfig: kube.kubeConfig(),
        logger,
        retry: { initialMs: 20, maxMs: 200 },
        watchTimeoutSeconds: 5,
        stallGraceMs: 500,
        resyncIntervalMs: 0,
        // These tests are about the Service and EndpointSlice reflectors; route kinds have their own.
        routeKinds: false,
        onServiceChanged: (namespace, name) => changes.push(`${namespace}/${name}`),
        onError: (error) => errors.push(error),
        ...overrides,
      });
      const harness = { kube, watch, changes, errors, logs: entries };
      running.push(harness);
      return harness;
    },
    track: (harness) => {
      running.push(harness);
    },
  };
}

/** start() resolves once listed; the watches connect right after. */
export async function watching(h: Harness, count = 2): Promise<void> {
  await eventually(() => h.kube.openWatches() === count, 5_000, `${count} open watches`);
}

export function sliceNames(watch: ClusterWatch, namespace: string, service: string): string[] {
  return watch
    .slicesOf(namespace, service)
    .map((slice) => slice.metadata.name)
    .sort();
}

/** The informer cache and the server agree on every slice (name and resourceVersion). */
export function cacheMatchesServer({ kube, watch }: Harness): boolean {
  const onServer = kube
    .list("EndpointSlice")
    .map((slice) => `${slice.metadata.namespace}/${slice.metadata.name}@${slice.metadata.resourceVersion}`)
    .sort();
  const services = new Set(
    kube
      .list("EndpointSlice")
      .map((slice) => `${slice.metadata.namespace}/${slice.metadata.labels?.["kubernetes.io/service-name"]}`),
  );
  const cached = [...services]
    .flatMap((key) => {
      const [namespace = "", name = ""] = key.split("/");
      return watch.slicesOf(namespace, name);
    })
    .map((slice) => `${slice.metadata.namespace}/${slice.metadata.name}@${slice.metadata.resourceVersion}`)
    .sort();
  return JSON.stringify(onServer) === JSON.stringify(cached);
}
