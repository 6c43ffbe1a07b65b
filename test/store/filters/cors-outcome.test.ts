import { describe, expect, it } from "vitest";
import { type CorsOutcome, corsOutcome, originMatches } from "../../../store/filters/cors.js";
import type { Cors } from "../../../store/routes.js";

const policy = (extra: Partial<Cors> = {}): Cors => ({
  allowOrigins: ["https://www.foo.com", "https://*.bar.com", "http://local.test:8080"],
  allowMethods: ["GET", "OPTIONS"],
  allowHeaders: ["x-a", "x-b"],
  exposeHeaders: ["x-c"],
  allowCredentials: false,
  maxAge: 5,
  ...extra,
});
const request = (method: string, headers: Record<string, string>) => ({
  method,
  headers: new Headers(headers),
});
const preflight = (origin: string, wanted = "GET", wantedHeaders?: string) =>
  request("OPTIONS", {
    origin,
    "access-control-request-method": wanted,
    ...(wantedHeaders ? { "access-control-request-headers": wantedHeaders } : {}),
  });
const fields = (outcome: CorsOutcome) =>
  Object.fromEntries("preflight" in outcome ? outcome.preflight : (outcome.response?.append ?? []));

describe("CORS origins", () => {
  it.each([
    ["https://www.foo.com", "https://www.foo.com", true],
    ["https://www.foo.com", "http://www.foo.com", false],
    ["https://www.foo.com", "https://www.foo.com:8443", false],
    ["https://*.bar.com", "https://www.bar.com", true],
    ["https://*.bar.com", "https://a.b.bar.com", true],
    ["https://*.bar.com", "https://bar.com", false],
    ["https://*.bar.com", "https://evilbar.com", false],
    ["https://*.bar.com", "https://www.bar.com:99", false],
    ["https://*.bar.com", "http://www.bar.com", false],
  ])("%s admits %s: %s", (allowed, origin, admitted) => {
    expect(originMatches(allowed, origin)).toBe(admitted);
  });
});

describe("CORS answers", () => {
  it.each([
    {
      name: "a preflight from an allowed origin gets the lists, expose headers and max age",
      cors: policy(),
      request: preflight("https://www.foo.com", "GET", "x-a"),
      want: {
        "access-control-allow-origin": "https://www.foo.com",
        vary: "Origin",
        "access-control-allow-methods": "GET, OPTIONS",
        "access-control-allow-headers": "x-a, x-b",
        "access-control-expose-headers": "x-c",
        "access-control-max-age": "5",
      },
    },
    {
      name: "a preflight from an origin not allowed gets no field",
      cors: policy(),
      request: preflight("https://foobar.com"),
      want: {},
    },
    {
      name: "with credentials, wildcard origin, methods and headers echo the request's",
      cors: policy({ allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: true }),
      request: preflight("https://any.test", "PUT", "x-z, x-y"),
      want: {
        "access-control-allow-origin": "https://any.test",
        vary: "Origin",
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": "PUT",
        "access-control-allow-headers": "x-z, x-y",
        "access-control-expose-headers": "x-c",
        "access-control-max-age": "5",
      },
    },
    {
      name: "without credentials, a wildcard origin is answered *",
      cors: policy({ allowOrigins: ["*"], exposeHeaders: [] }),
      request: preflight("https://any.test"),
      want: {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, OPTIONS",
        "access-control-allow-headers": "x-a, x-b",
        "access-control-max-age": "5",
      },
    },
    {
      name: "a simple request from an allowed origin gets origin, credentials and expose headers",
      cors: policy({ allowCredentials: true }),
      request: request("GET", { origin: "https://www.bar.com" }),
      want: {
        "access-control-allow-origin": "https://www.bar.com",
        vary: "Origin",
        "access-control-allow-credentials": "true",
        "access-control-expose-headers": "x-c",
      },
    },
    {
      name: "with credentials, an expose-headers * is not written (Fetch reads it as a name)",
      cors: policy({ allowCredentials: true, exposeHeaders: ["*"] }),
      request: request("GET", { origin: "https://www.foo.com" }),
      want: {
        "access-control-allow-origin": "https://www.foo.com",
        vary: "Origin",
        "access-control-allow-credentials": "true",
      },
    },
    {
      name: "an OPTIONS without Access-Control-Request-Method is not a preflight: it is proxied",
      cors: policy(),
      request: request("OPTIONS", { origin: "http://local.test:8080" }),
      want: {
        "access-control-allow-origin": "http://local.test:8080",
        vary: "Origin",
        "access-control-expose-headers": "x-c",
      },
    },
    {
      name: "a request without Origin gets nothing",
      cors: policy(),
      request: request("GET", {}),
      want: {},
    },
  ])("$name", ({ cors, request, want }) => {
    expect(fields(corsOutcome(cors, request))).toEqual(want);
  });

  it("tells a preflight from a request to proxy", () => {
    expect("preflight" in corsOutcome(policy(), preflight("https://foobar.com"))).toBe(true);
    expect("response" in corsOutcome(policy(), request("OPTIONS", { origin: "https://www.foo.com" }))).toBe(
      true,
    );
  });

  it("replaces the backend's Access-Control fields on a proxied answer", () => {
    const outcome = corsOutcome(policy(), request("GET", { origin: "https://www.foo.com" }));
    const drop = "response" in outcome ? outcome.response?.drop : undefined;
    expect([...(drop ?? [])].sort()).toEqual([
      "access-control-allow-credentials",
      "access-control-allow-origin",
      "access-control-expose-headers",
    ]);
  });
});
