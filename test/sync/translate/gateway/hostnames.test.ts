import { describe, expect, it } from "vitest";
import {
  hostnamesThroughListener,
  intersectHostname,
  unionHostnames,
} from "../../../../sync/translate/gateway/hostnames.js";

/** Examples from gateway.networking.k8s.io/v1 HTTPRoute.spec.hostnames (v1.6.1 CRD description). */
describe("hostname intersection", () => {
  it.each([
    [
      "a listener's exact host takes the same route host",
      "test.example.com",
      "test.example.com",
      "test.example.com",
    ],
    [
      "a listener's exact host takes a route wildcard over it",
      "test.example.com",
      "*.example.com",
      "test.example.com",
    ],
    [
      "a listener wildcard takes a route host one label under it",
      "*.example.com",
      "test.example.com",
      "test.example.com",
    ],
    [
      "a listener wildcard takes a route host several labels under it",
      "*.example.com",
      "foo.test.example.com",
      "foo.test.example.com",
    ],
    ["a listener wildcard takes the same wildcard", "*.example.com", "*.example.com", "*.example.com"],
    [
      "a listener wildcard takes a narrower route wildcard",
      "*.example.com",
      "*.test.example.com",
      "*.test.example.com",
    ],
    [
      "a route wildcard narrows to a listener's narrower wildcard",
      "*.test.example.com",
      "*.example.com",
      "*.test.example.com",
    ],
    ["a listener wildcard refuses its own domain", "*.example.com", "example.com", undefined],
    ["a listener wildcard refuses another domain", "*.example.com", "test.example.net", undefined],
    ["an exact listener host refuses another host", "very.specific.com", "non.matching.com", undefined],
    [
      "a listener wildcard refuses a host that only ends with the same letters",
      "*.example.com",
      "test.myexample.com",
      undefined,
    ],
    ["a listener without hostname takes any route host", undefined, "*.example.com", "*.example.com"],
  ])("%s (%s ∩ %s → %s)", (_case, listener, route, expected) => {
    expect(intersectHostname(listener, route)).toBe(expected);
  });

  it("ignores route hostnames the listener does not cover and keeps the rest", () => {
    expect(hostnamesThroughListener("*.example.com", ["test.example.com", "test.example.net"])).toEqual([
      "test.example.com",
    ]);
  });

  it.each([
    ["neither sets hostnames: every host", undefined, [], "any"],
    ["only the listener sets one: the listener's", "*.example.com", [], ["*.example.com"]],
    [
      "only the route sets them: the route's",
      null,
      ["a.example.com", "b.example.com"],
      ["a.example.com", "b.example.com"],
    ],
    ["no intersection: nothing", "very.specific.com", ["specific.but.wrong.com", "wildcard.io"], []],
  ])("%s", (_case, listener, route, expected) => {
    expect(hostnamesThroughListener(listener, route)).toEqual(expected);
  });

  it("unites the hosts of several listeners, sorted, and lets every-host absorb the rest", () => {
    expect(unionHostnames([["b.example.com"], ["a.example.com", "b.example.com"]])).toEqual([
      "a.example.com",
      "b.example.com",
    ]);
    expect(unionHostnames([["a.example.com"], "any"])).toBe("any");
  });
});
