// `node --import tsx bench/proxy/tracing-off-micro.ts`: what W3C trace context costs per request while tracing
// is off (issue 38 item 2), apart from the proxy bench's noise. The upstream header list of a typical request
// is built three ways: as before tracing (no trace fields), with tracing off for a request that brought no
// traceparent (a new trace id), and for one whose valid traceparent goes on. CPU time (process.cpuUsage) per
// call, median of ROUNDS rounds of CALLS calls each, rounds of the three interleaved so the machine's load
// falls on all alike.
import { randomBytes } from "node:crypto";
import { type ForwardingInfo, upstreamRequestHeaderList } from "../../functions/core/http/headers.js";
import { TraceIds } from "../../functions/core/http/trace-context.js";
import { propagationOnly } from "../../functions/core/observability/tracing.js";

const CALLS = 200_000;
const ROUNDS = 9;

const raw = [
  "Host",
  "pay.test",
  "User-Agent",
  "curl/8.5.0",
  "Accept",
  "*/*",
  "Accept-Encoding",
  "gzip, br",
  "Cookie",
  "session=0123456789abcdef",
  "X-Request-Id",
  "f0e1d2c3-b4a5-4697-8879-6a5b4c3d2e1f",
];
const withParent = [...raw, "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"];
const base: ForwardingInfo = { clientIp: "127.0.0.1", proto: "http", host: "pay.test", requestId: "r-1" };
const tracing = propagationOnly(new TraceIds((bytes) => randomBytes(bytes).toString("hex")));
const off: ForwardingInfo = { ...base, trace: tracing.untraced.fields };

const cases = {
  "before (no trace fields)": () => upstreamRequestHeaderList(raw, base),
  "tracing off, no traceparent": () => upstreamRequestHeaderList(raw, off),
  "before, traceparent as any field": () => upstreamRequestHeaderList(withParent, base),
  "tracing off, traceparent": () => upstreamRequestHeaderList(withParent, off),
};

const perCall: Record<string, number[]> = {};
let sink = 0;
for (let round = 0; round < ROUNDS + 1; round++) {
  for (const [name, run] of Object.entries(cases)) {
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) sink += run().length;
    const used = process.cpuUsage(start);
    // The first round warms the JIT up and is not counted.
    if (round === 0) continue;
    const values = perCall[name] ?? [];
    values.push(((used.user + used.system) * 1000) / CALLS);
    perCall[name] = values;
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const before = median(perCall["before (no trace fields)"] ?? []);
for (const [name, values] of Object.entries(perCall)) {
  const ns = median(values);
  console.log(`${name.padEnd(30)} ${ns.toFixed(0).padStart(5)} ns/call  (+${(ns - before).toFixed(0)} ns)`);
}
if (sink === 0) console.log("(nothing built)");
