import type { FakeKube } from "../../fake-kube/server.js";
import { INFRA } from "./conformance-base.js";

/**
 * Each `status.parents` entry of GRPCRoute `name` (infra namespace) as `parent: Type=Status/Reason...`, once every
 * entry is Accepted and its refs resolved, or after `timeoutMs` (the sync's leader writes status a moment after
 * it publishes).
 */
export async function untilGrpcRouteAccepted(
  kube: FakeKube,
  name: string,
  timeoutMs = 5_000,
): Promise<string[]> {
  type Entry = {
    parentRef: { name: string; sectionName?: string };
    conditions: { type: string; status: string; reason: string }[];
  };
  const read = () => {
    const status = kube.get("GRPCRoute", INFRA, name)?.status as { parents?: Entry[] } | undefined;
    return (status?.parents ?? []).map(
      (entry) =>
        `${[entry.parentRef.name, entry.parentRef.sectionName].filter(Boolean).join("/")}: ${entry.conditions
          .map((item) => `${item.type}=${item.status}/${item.reason}`)
          .join(" ")}`,
    );
  };
  const accepted = (lines: string[]) =>
    lines.length > 0 &&
    lines.every(
      (line) => line.includes("Accepted=True/Accepted") && line.includes("ResolvedRefs=True/ResolvedRefs"),
    );
  const deadline = Date.now() + timeoutMs;
  while (!accepted(read()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return read();
}
