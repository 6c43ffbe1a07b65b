import { setFlagsFromString } from "node:v8";

/**
 * Turns off V8's allocation-site pretenuring for this process. V8 samples the objects each object or array
 * literal creates, and once nearly all of a sample survived a scavenge it allocates that literal's objects
 * straight into the old generation for the rest of the process's life. The first burst of requests after a
 * start looks exactly like that (every request in flight survives the first scavenges after the load
 * begins), so V8 settled on pretenuring the request path's literals (the attempt's request, the route and
 * its forwarding facts) in most starts measured. Each request then left objects
 * in the old generation that kept its young objects alive through the next scavenges, which copied and
 * promoted up to 3.3 KB per request until a mark-compact: on one pinned core, scavenge pauses of 6 to 10 µs
 * per HTTP/2 request against about 2 µs without pretenuring (bench/README.md, "The router's GC regime").
 *
 * Node calls changing V8 flags after start unsupported in general; this one is only read by the heap when it
 * weighs the samples at a collection, so it takes effect from the next one. Call it before serving.
 */
export function keepRequestObjectsYoung(): void {
  setFlagsFromString("--no-allocation-site-pretenuring");
}
