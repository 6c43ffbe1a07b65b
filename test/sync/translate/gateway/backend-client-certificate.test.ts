import { describe, expect, it } from "vitest";
import type { Condition } from "../../../../sync/translate/gateway/conditions.js";
import { gatewayStatus } from "../../../../sync/translate/object-status.js";

/** The Gateway's own ResolvedRefs (its backend client certificate) as the status writer merges it. */
describe("a Gateway's ResolvedRefs condition", () => {
  const written = (conditions: Condition[]) => {
    const before = {
      conditions: [
        { type: "Accepted", status: "True", reason: "Accepted", message: "", lastTransitionTime: "t0" },
        {
          type: "ResolvedRefs",
          status: "False",
          reason: "InvalidClientCertificateRef",
          message: "",
          lastTransitionTime: "t0",
        },
      ],
    };
    const desired = {
      addresses: [],
      listeners: [],
      conditions: [
        { type: "Accepted", status: "True" as const, reason: "Accepted", message: "" },
        ...conditions,
      ],
    };
    const status = gatewayStatus({ status: before }, desired as never, "t1") as {
      conditions: { type: string; status: string }[];
    };
    return status.conditions.map((item) => `${item.type}=${item.status}`);
  };

  it("is dropped once the Gateway has no backend client certificate", () => {
    expect(written([])).toEqual(["Accepted=True"]);
  });

  it("is replaced while it has one", () => {
    expect(written([{ type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", message: "" }])).toEqual([
      "Accepted=True",
      "ResolvedRefs=True",
    ]);
  });
});
