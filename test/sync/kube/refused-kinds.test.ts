import { describe, expect, it } from "vitest";
import { KINDS, type KindSpec, ROUTE_KINDS } from "../../../sync/kube/kinds.js";
import { OptionalKinds } from "../../../sync/kube/optional-kinds.js";
import { recordingLogger } from "../../support/loggers.js";

const refusable = ROUTE_KINDS.filter((kind) => (KINDS[kind] as KindSpec).whenRefused !== undefined);

describe("kinds the sync's RBAC may refuse (the whenRefused column of kinds.ts)", () => {
  it("are the kinds added after deploy/ first shipped, or read for one feature only", () => {
    expect(refusable).toEqual(expect.arrayContaining(["GRPCRoute", "TLSRoute", "Secret"]));
    expect(refusable).not.toContain("HTTPRoute");
    expect(refusable).not.toContain("Gateway");
  });

  it.each(ROUTE_KINDS)("read %s as none when refused exactly when the table gives it a line", (kind) => {
    const { logger } = recordingLogger();
    const optional = new OptionalKinds({ logger, retryMs: 1_000, namespaced: false });
    expect(optional.forKind(kind, kind).unreadableWhenRefused).toBe(refusable.includes(kind));
  });

  it("warns with the kind's own line, which says what is lost and what to grant", () => {
    const { logger, entries } = recordingLogger();
    const optional = new OptionalKinds({ logger, retryMs: 1_000, namespaced: false });
    optional.forKind("GRPCRoute", "grpcroutes").onMissing?.("refused");
    expect(entries.filter((entry) => entry.level === "warn").map((entry) => entry.message)).toEqual([
      "GRPCRoutes are not readable: none is published; retrying (grant get, list, watch on grpcroutes and " +
        "update on grpcroutes/status, as deploy/ does)",
    ]);
  });

  it("reads a cluster-scoped kind as none when refused under WATCH_NAMESPACES (Roles grant nothing cluster-wide)", () => {
    const { logger } = recordingLogger();
    const optional = new OptionalKinds({ logger, retryMs: 1_000, namespaced: true });
    expect(optional.forKind("GatewayClass", "gatewayclasses").unreadableWhenRefused).toBe(true);
    expect(optional.forKind("HTTPRoute", "httproutes").unreadableWhenRefused).toBe(false);
  });
});
