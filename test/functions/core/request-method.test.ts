import { METHODS } from "node:http";
import { describe, expect, it } from "vitest";
import { methodProblem } from "../../../functions/core/http/request-method.js";

const known = new Set(METHODS);

describe("the methods the router takes, held to HTTP/1.1's (RFC 9110 §9.1: case-sensitive)", () => {
  it.each<[string, string | undefined]>([
    ["GET", undefined],
    ["POST", undefined],
    ["PROPFIND", undefined],
    ["get", "bad_request"],
    ["Get", "bad_request"],
    ["post", "bad_request"],
    ["FOO", "bad_request"],
    ["", "bad_request"],
  ])("%j: %s", (method, problem) => {
    expect(methodProblem(method, known)).toBe(problem);
  });
});
