import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { upstreamRequestHeaderList, upstreamRequestHeaders } from "../../../functions/core/http/headers.js";
import {
  createRequestIds,
  errorAnswerWithRequestId,
  errorResponseWithRequestId,
  isValidRequestId,
  MAX_REQUEST_ID_LENGTH,
  requestIdOf,
} from "../../../functions/core/http/request-id.js";

const generated = () => "generated-id";

describe("isValidRequestId", () => {
  it.each([
    ["a UUID", "3f2b8c1e-9a4d-4e7b-8f00-1c2d3e4f5a6b", true],
    ["a ULID", "01HZX3J6Y7K8M9N0P1Q2R3S4T5", true],
    ["base64 with padding", "q83vEjRWeJA+/w==", true],
    ["dots, colons and underscores", "edge_1.req:42", true],
    ["the longest allowed", "a".repeat(MAX_REQUEST_ID_LENGTH), true],
    ["empty", "", false],
    ["one character too long", "a".repeat(MAX_REQUEST_ID_LENGTH + 1), false],
    ["a space", "abc def", false],
    ["a comma (a header sent twice, joined)", "abc, def", false],
    ["a quote", 'abc"', false],
    ["a backslash", "abc\\", false],
    ["a newline", "abc\ndef", false],
    ["a semicolon", "Root=1-abc;Parent=2", false],
    ["non-ASCII", "caf\u00e9", false],
  ])("%s: %s", (_name, value, valid) => {
    expect(isValidRequestId(value)).toBe(valid);
  });
});

describe("requestIdOf", () => {
  it.each([
    ["keeps a valid incoming id", "abc-123", "abc-123"],
    ["generates one when none came", undefined, "generated-id"],
    ["generates one for a missing web header", null, "generated-id"],
    ["replaces an invalid incoming id", "<script>", "generated-id"],
    ["replaces an over-long incoming id", "x".repeat(500), "generated-id"],
  ])("%s", (_name, incoming, expected) => {
    expect(requestIdOf(incoming, generated)).toBe(expected);
  });

  it("generates UUIDs that are valid ids with crypto.randomUUID (Node and Workers)", () => {
    const id = requestIdOf(undefined, () => crypto.randomUUID());
    expect(isValidRequestId(id)).toBe(true);
    expect(id).not.toBe(requestIdOf(undefined, () => crypto.randomUUID()));
  });
});

describe("error answers with the request id", () => {
  it("adds the id to the contract's body and as X-Request-Id, keeping status and headers", () => {
    const answer = errorAnswerWithRequestId("no_endpoints", "abc-123");
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({ error: "no_endpoints", requestId: "abc-123" });
    expect(answer.headers).toEqual(
      expect.arrayContaining([
        ["content-type", "application/json"],
        ["retry-after", "5"],
        ["x-request-id", "abc-123"],
      ]),
    );
  });

  it("builds the same answer as a web Response", async () => {
    const response = errorResponseWithRequestId("no_route", "abc");
    expect(response.status).toBe(404);
    expect(response.headers.get("x-request-id")).toBe("abc");
    expect(await response.text()).toBe('{"error":"no_route","requestId":"abc"}');
  });
});

describe("W3C Trace Context passes the router untouched", () => {
  const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const tracestate = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
  const info = { clientIp: "192.0.2.1", proto: "http" as const, host: "app.example" };

  it("on the web path", () => {
    const out = upstreamRequestHeaders(new Headers({ traceparent, tracestate }), info);
    expect([out.get("traceparent"), out.get("tracestate")]).toEqual([traceparent, tracestate]);
  });

  it("on the Node path", () => {
    const out = upstreamRequestHeaderList(["traceparent", traceparent, "tracestate", tracestate], info);
    expect(out.slice(2, 6)).toEqual(["traceparent", traceparent, "tracestate", tracestate]);
  });
});

describe("a process's request ids", () => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it("are UUID version 4 shaped, valid request ids, and never repeat within the process", () => {
    const next = createRequestIds(randomBytes);
    const ids = Array.from({ length: 10_000 }, next);
    for (const id of ids) {
      expect(id).toMatch(UUID_V4);
      expect(isValidRequestId(id)).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("differ between processes: each draws its own random part", () => {
    expect(createRequestIds(randomBytes)()).not.toBe(createRequestIds(randomBytes)());
  });

  it("set the version and variant bits whatever the random bytes are", () => {
    for (const fill of [0x00, 0xff]) {
      const id = createRequestIds((size) => new Uint8Array(size).fill(fill))();
      expect(id).toMatch(UUID_V4);
    }
    expect(createRequestIds((size) => new Uint8Array(size).fill(0))()).toBe(
      "00000000-0000-4000-8000-000000000001",
    );
  });
});
