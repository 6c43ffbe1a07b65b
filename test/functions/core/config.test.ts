import { describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";

describe("parseRouterConfig: the access log", () => {
  it("is off, sampling everything once on, by default", () => {
    expect(parseRouterConfig({}).accessLog).toEqual({ enabled: false, sample: 1 });
  });

  it.each([
    [{ ACCESS_LOG: "true" }, { enabled: true, sample: 1 }],
    [
      { ACCESS_LOG: "1", ACCESS_LOG_SAMPLE: "0.1" },
      { enabled: true, sample: 0.1 },
    ],
    [
      { ACCESS_LOG: "on", ACCESS_LOG_SAMPLE: "0" },
      { enabled: true, sample: 0 },
    ],
    [
      { ACCESS_LOG: "", ACCESS_LOG_SAMPLE: "" },
      { enabled: false, sample: 1 },
    ],
    [
      { ACCESS_LOG: "false", ACCESS_LOG_SAMPLE: "0.5" },
      { enabled: false, sample: 0.5 },
    ],
  ])("reads %j as %j", (env, expected) => {
    expect(parseRouterConfig(env).accessLog).toEqual(expected);
  });

  it.each([
    [{ ACCESS_LOG: "maybe" }, /ACCESS_LOG must be true or false/],
    [{ ACCESS_LOG_SAMPLE: "1.5" }, /ACCESS_LOG_SAMPLE/],
    [{ ACCESS_LOG_SAMPLE: "-0.1" }, /ACCESS_LOG_SAMPLE/],
    [{ ACCESS_LOG_SAMPLE: "half" }, /ACCESS_LOG_SAMPLE/],
  ])("refuses %j", (env, message) => {
    expect(() => parseRouterConfig(env)).toThrow(message);
  });

  it("names every bad variable in one error", () => {
    expect(() => parseRouterConfig({ ACCESS_LOG: "x", ACCESS_LOG_SAMPLE: "2" })).toThrow(
      /ACCESS_LOG must .*; ACCESS_LOG_SAMPLE must /,
    );
  });
});

describe("parseRouterConfig: client connections", () => {
  /** AWS ALB, GCP and Azure load balancers close idle connections after 60 s by default. */
  const BALANCER_IDLE_MS = 60_000;

  it("keeps an idle client connection, and waits for a request head, longer than a balancer's idle timeout by default", () => {
    const { clientKeepAliveTimeoutMs, clientHeadersTimeoutMs } = parseRouterConfig({});
    expect(clientKeepAliveTimeoutMs).toBeGreaterThan(BALANCER_IDLE_MS);
    expect(clientHeadersTimeoutMs).toBeGreaterThan(clientKeepAliveTimeoutMs);
    expect([clientKeepAliveTimeoutMs, clientHeadersTimeoutMs]).toEqual([65_000, 66_000]);
  });

  it("reads CLIENT_KEEP_ALIVE_TIMEOUT_MS and CLIENT_HEADERS_TIMEOUT_MS", () => {
    const config = parseRouterConfig({
      CLIENT_KEEP_ALIVE_TIMEOUT_MS: "350000",
      CLIENT_HEADERS_TIMEOUT_MS: "20000",
    });
    expect([config.clientKeepAliveTimeoutMs, config.clientHeadersTimeoutMs]).toEqual([350_000, 20_000]);
  });

  it.each([
    [{ CLIENT_KEEP_ALIVE_TIMEOUT_MS: "0" }, /CLIENT_KEEP_ALIVE_TIMEOUT_MS/],
    [{ CLIENT_HEADERS_TIMEOUT_MS: "300001" }, /CLIENT_HEADERS_TIMEOUT_MS/],
  ])("refuses %j", (env, message) => {
    expect(() => parseRouterConfig(env)).toThrow(message);
  });
});

describe("parseRouterConfig: METRICS_BACKENDS", () => {
  it("is a series per Service by default", () => {
    expect(parseRouterConfig({}).metricsBackends).toBe("service");
  });

  it.each(["service", "cluster", "none"] as const)("reads %s", (value) => {
    expect(parseRouterConfig({ METRICS_BACKENDS: value }).metricsBackends).toBe(value);
  });

  it("refuses anything else, naming the choices", () => {
    expect(() => parseRouterConfig({ METRICS_BACKENDS: "pod" })).toThrow(
      /METRICS_BACKENDS must be one of service, cluster, none/,
    );
  });
});

describe("parseRouterConfig: the admin listener", () => {
  it.each([
    { env: {}, adminPort: 9901, adminHost: undefined },
    { env: { PORT: "8080" }, adminPort: 9901, adminHost: undefined },
    { env: { PORT: "0" }, adminPort: 0, adminHost: undefined },
    { env: { PORT: "0", ADMIN_PORT: "9902" }, adminPort: 9902, adminHost: undefined },
    { env: { ADMIN_PORT: "9100", ADMIN_HOST: "127.0.0.1" }, adminPort: 9100, adminHost: "127.0.0.1" },
  ])("reads $env as port $adminPort on $adminHost", ({ env, adminPort, adminHost }) => {
    expect(parseRouterConfig(env)).toMatchObject({ adminPort, adminHost });
  });

  it("refuses an ADMIN_PORT that is no port number, naming it", () => {
    expect(() => parseRouterConfig({ ADMIN_PORT: "70000" })).toThrow(/ADMIN_PORT/);
  });
});

describe("parseRouterConfig: HTTPS", () => {
  const key = Buffer.alloc(32, 7).toString("base64");
  it.each([
    { env: {}, httpsPort: 8443, keyed: false },
    { env: { PORT: "0" }, httpsPort: 0, keyed: false },
    { env: { HTTPS_PORT: "443", TLS_STORE_KEY: key }, httpsPort: 443, keyed: true },
    { env: { TLS_STORE_KEY: "  " }, httpsPort: 8443, keyed: false },
  ])("reads $env as HTTPS_PORT $httpsPort, a store key: $keyed", ({ env, httpsPort, keyed }) => {
    const config = parseRouterConfig(env);
    expect(config.httpsPort).toBe(httpsPort);
    expect(config.tlsStoreKey?.length ?? 0).toBe(keyed ? 32 : 0);
  });

  it.each([
    "c2hvcnQ=",
    `${Buffer.alloc(33).toString("base64")}`,
    "not base64 at all, but 44 characters long!!",
  ])("refuses TLS_STORE_KEY %j, saying what it must be", (value) => {
    expect(() => parseRouterConfig({ TLS_STORE_KEY: value })).toThrow(
      /TLS_STORE_KEY must be 32 bytes in base64/,
    );
  });
});

describe("parseRouterConfig: behind a load balancer", () => {
  it("trusts nobody and reads no PROXY header by default", () => {
    const config = parseRouterConfig({});
    expect(config.trustedProxies?.networks).toEqual([]);
    expect(config.trustedProxies?.trusts("10.0.0.1")).toBe(false);
    expect(config.proxyProtocol).toBe(false);
  });

  it("reads TRUSTED_PROXIES and PROXY_PROTOCOL", () => {
    const config = parseRouterConfig({ TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.9", PROXY_PROTOCOL: "true" });
    expect(config.trustedProxies?.networks).toEqual(["10.0.0.0/8", "192.0.2.9/32"]);
    expect(config.trustedProxies?.trusts("10.1.2.3")).toBe(true);
    expect(config.proxyProtocol).toBe(true);
  });

  it.each([
    [{ TRUSTED_PROXIES: "10.1.0.0/8" }, /TRUSTED_PROXIES .*did you mean 10\.0\.0\.0\/8/],
    [{ TRUSTED_PROXIES: "balancer" }, /TRUSTED_PROXIES must be CIDRs or addresses/],
    [{ PROXY_PROTOCOL: "v2" }, /PROXY_PROTOCOL must be true or false/],
    [{ PROXY_PROTOCOL: "true" }, /PROXY_PROTOCOL: set TRUSTED_PROXIES/],
  ])("refuses %j", (env, message) => {
    expect(() => parseRouterConfig(env)).toThrow(message);
  });
});
