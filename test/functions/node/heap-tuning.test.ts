import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const WORKLOAD = fileURLToPath(new URL("./fixtures/literal-survivors.ts", import.meta.url));

/** V8's pretenuring trace of the workload: one line per allocation site weighed, "… => tenure" when tenured. */
async function pretenuringTrace(mode: "tuned" | "default"): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--trace-pretenuring-statistics", WORKLOAD, mode],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

describe("the Node router's heap tuning", () => {
  it("keeps V8 from tenuring the objects of a literal that outlive a few scavenges", async () => {
    const untuned = await pretenuringTrace("default");
    // The workload does make V8 tenure a literal by default, so the tuned run's silence means something.
    expect(untuned).toMatch(/=> tenure/);
    const tuned = await pretenuringTrace("tuned");
    expect(tuned).not.toMatch(/=> tenure/);
  }, 60_000);
});
