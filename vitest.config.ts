import { defineConfig } from "vitest/config";

/** Files that each start a real kube-apiserver and etcd (test/support/envtest.ts). */
const APISERVER_FILES = ["test/envtest/**/*.test.ts", "test/deploy/apiserver.test.ts"];

/**
 * Two groups, one after the other. Most files wait on sockets, child processes and timers rather than the CPU,
 * so three run at a time on a 2-core machine; the apiserver files go first, two at a time, because an apiserver
 * starting next to two others takes long enough to outlast its tests' bounds (its RBAC answers 403 meanwhile).
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: { name: "apiserver", include: APISERVER_FILES, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: "rest",
          include: ["test/**/*.test.ts"],
          exclude: APISERVER_FILES,
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
