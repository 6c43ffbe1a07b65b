import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProfileSummary, summariseCpuProfile } from "../proxy/cpu-profile.js";
import type { Child } from "../support/child.js";
import { type H2loadPlan, runH2load } from "./h2load.js";

/**
 * The router's V8 CPU profile over one more h2load run of `plan`, after the measured rounds (router-probe.mjs
 * turns the profiler on and off, so start-up and warm-up stay out of it), summarised by self time.
 */
export async function profileH2Router(router: Child, plan: H2loadPlan): Promise<ProfileSummary> {
  const directory = await mkdtemp(join(tmpdir(), "edgeslice-h2-cpuprof-"));
  try {
    router.send({ type: "profile-start" });
    await router.next("profile-started", 10_000);
    await runH2load(plan);
    const file = join(directory, "router.cpuprofile");
    router.send({ type: "profile-stop", file });
    await router.next("profile-stopped", 30_000);
    return await summariseCpuProfile(file);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
