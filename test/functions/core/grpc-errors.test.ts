import { describe, expect, it } from "vitest";
import type { RouterError } from "../../../functions/core/http/errors.js";
import {
  GRPC_STATUS,
  grpcErrorAnswer,
  grpcStatusOf,
  grpcStatusOfHttp,
  isGrpcRequest,
} from "../../../functions/core/http/grpc-errors.js";

describe("the router's errors as gRPC statuses (as Envoy answers gRPC calls)", () => {
  it.each<[RouterError, number]>([
    ["no_route", GRPC_STATUS.UNIMPLEMENTED],
    ["no_endpoints", GRPC_STATUS.UNAVAILABLE],
    ["no_snapshot", GRPC_STATUS.UNAVAILABLE],
    ["bad_gateway", GRPC_STATUS.UNAVAILABLE],
    ["upstream_timeout", GRPC_STATUS.DEADLINE_EXCEEDED],
    ["bad_request", GRPC_STATUS.INTERNAL],
    ["too_many_headers", GRPC_STATUS.INTERNAL],
    ["request_timeout", GRPC_STATUS.UNKNOWN],
    ["invalid_backend", GRPC_STATUS.UNKNOWN],
    ["client_closed", GRPC_STATUS.CANCELLED],
  ])("%s is gRPC status %i", (error, code) => {
    expect(grpcStatusOf(error).code).toBe(code);
  });

  it.each([
    [400, 13],
    [401, 16],
    [403, 7],
    [404, 12],
    [429, 14],
    [502, 14],
    [503, 14],
    [504, 14],
    [500, 2],
    [418, 2],
  ])("HTTP %i maps to gRPC %i (gRPC's http-grpc-status-mapping)", (status, code) => {
    expect(grpcStatusOfHttp(status)).toBe(code);
  });

  it("answers HTTP 200 with grpc-status and grpc-message in the head, no body, the request id kept", () => {
    expect(grpcErrorAnswer("no_endpoints", "rid-1")).toEqual({
      status: 200,
      headers: [
        ["content-type", "application/grpc"],
        ["grpc-status", "14"],
        ["grpc-message", "edgeslice: no_endpoints"],
        ["x-request-id", "rid-1"],
      ],
      body: "",
    });
  });
});

describe("which requests are gRPC calls", () => {
  it.each<[string | null | undefined, boolean]>([
    ["application/grpc", true],
    ["application/grpc+proto", true],
    ["application/grpc+json", true],
    ["Application/GRPC", true],
    ["application/grpc;charset=utf-8", true],
    ["application/grpc-web", false],
    ["application/grpc-web+proto", false],
    ["application/grpcx", false],
    ["application/json", false],
    ["", false],
    [null, false],
    [undefined, false],
  ])("content-type %s: %s", (contentType, expected) => {
    expect(isGrpcRequest(contentType)).toBe(expected);
  });
});
