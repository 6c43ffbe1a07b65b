/** The two response sizes the proxy bench compares: a tiny body (per-request overhead) and 64 KiB (streaming). */
export const PAYLOAD_PATHS = { small: "/small", large: "/large" } as const;
export type PayloadName = keyof typeof PAYLOAD_PATHS;

export const SMALL_BODY = Buffer.from("hello from the bench backend\n");
export const LARGE_BODY = Buffer.alloc(64 * 1024, "x");

/** The Host the edgeslice router is told to route to the backend. */
export const BENCH_HOST = "bench.example.test";
