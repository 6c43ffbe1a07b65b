// Loaded with `node --import` into the edgeslice router under the proxy bench; the router itself is unchanged.
// Over the IPC channel the bench's other participants speak (bench/support/child.ts) it answers:
//   {type: "profile-start"}      -> {type: "profile-started"}   V8's CPU profiler on (node:inspector)
//   {type: "profile-stop", file} -> {type: "profile-stopped"}   the .cpuprofile written to `file`
// so a profile covers the load only, not start-up and warm-up. With BENCH_ROUTER_PROBE=process (the built
// router, which knows nothing of the bench) also:
//   {type: "cpu"}  -> {type: "cpu", micros}   this process's CPU time so far (user + system)
//   {type: "stop"} -> SIGTERM to itself, so the router shuts down as Kubernetes stops it
// Plain JavaScript so the built router runs without tsx.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
// {type: "gc"} -> {type: "gc", scavenges, markCompacts}: V8's collections so far (gc-counts.mjs).
import "./gc-counts.mjs";

const ownsProcess = process.env.BENCH_ROUTER_PROBE === "process";
let session;

const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );

process.on("message", async (message) => {
  if (message?.type === "profile-start") {
    session = new Session();
    session.connect();
    await post("Profiler.enable");
    await post("Profiler.start");
    process.send?.({ type: "profile-started" });
  }
  if (message?.type === "profile-stop" && session) {
    const { profile } = await post("Profiler.stop");
    writeFileSync(message.file, JSON.stringify(profile));
    session.disconnect();
    session = undefined;
    process.send?.({ type: "profile-stopped" });
  }
  if (!ownsProcess) return;
  if (message?.type === "cpu") {
    const usage = process.cpuUsage();
    process.send?.({ type: "cpu", micros: usage.user + usage.system });
  }
  if (message?.type === "stop") process.kill(process.pid, "SIGTERM");
});
if (ownsProcess) process.on("disconnect", () => process.kill(process.pid, "SIGTERM"));
