import { defineConfig } from "vitest/config";

/**
 * Files that each start a control plane and sync processes against it: a real kube-apiserver and etcd
 * (test/envtest/, test/deploy/apiserver.test.ts; they skip without one) or the fake API server running the same
 * cases (test/control-plane/).
 */
const CONTROL_PLANE_FILES = [
  "test/envtest/**/*.test.ts",
  "test/deploy/apiserver.test.ts",
  "test/control-plane/**/*.test.ts",
];

/**
 * Two groups, one after the other. Most files wait on sockets, child processes and timers rather than the CPU,
 * so three run at a time on a 2-core machine; the control-plane files go first, two at a time, because an
 * apiserver starting next to two others takes long enough to outlast its tests' bounds (its RBAC answers 403
 * meanwhile), and their handover and catch-up bounds are measured on sync processes that must not starve.
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
        test: {
          name: "control-plane",
          include: CONTROL_PLANE_FILES,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "rest",
          include: ["test/**/*.test.ts"],
          exclude: CONTROL_PLANE_FILES,
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
