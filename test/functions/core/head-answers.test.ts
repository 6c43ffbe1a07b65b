import { describe, expect, it } from "vitest";
import {
  errorAnswer,
  NO_ENDPOINTS_RETRY_AFTER_SECONDS,
  type RouterError,
} from "../../../functions/core/http/errors.js";
import { headAnswer } from "../../../functions/core/http/head-answers.js";
import { errorAnswerWithRequestId } from "../../../functions/core/http/request-id.js";

describe("the router's own answer to HEAD", () => {
  it.each<RouterError>([
    "no_route",
    "no_endpoints",
    "no_snapshot",
    "bad_gateway",
    "upstream_timeout",
    "request_timeout",
  ])("keeps %s's status and every field that does not describe content, and carries no content", (error) => {
    const get = errorAnswerWithRequestId(error, "b5f0c5b4-4a7e-4c1e-9f3e-0c7a4a9d2e11");
    const head = headAnswer(get);
    expect(head.status).toBe(get.status);
    expect(head.body).toBe("");
    expect(head.headers).toEqual(get.headers.filter(([name]) => name !== "content-type"));
  });

  it("leaves out Content-Type, Content-Length, Content-Encoding and Content-Language", () => {
    const head = headAnswer({
      status: 404,
      headers: [
        ["content-type", "application/json"],
        ["content-length", "71"],
        ["content-encoding", "gzip"],
        ["content-language", "en"],
        ["cache-control", "no-store"],
      ],
      body: '{"error":"no_route"}',
    });
    expect(head).toEqual({ status: 404, headers: [["cache-control", "no-store"]], body: "" });
  });

  it("keeps Retry-After on a 503 and Connection: close on a 408", () => {
    expect(headAnswer(errorAnswer("no_endpoints")).headers).toContainEqual([
      "retry-after",
      String(NO_ENDPOINTS_RETRY_AFTER_SECONDS),
    ]);
    expect(headAnswer(errorAnswer("request_timeout")).headers).toContainEqual(["connection", "close"]);
  });
});
