import { describe, expect, it } from "vitest";
import { translateService } from "../../../sync/translate/backends.js";
import { endpointSliceProblems } from "../../../sync/translate/kube-objects.js";
import { endpoint, fam, http, none, service, slice, view } from "./fixtures.js";

/**
 * Every endpoint or port the translation drops is named with its reason, so the sync can log it once per
 * slice instead of publishing fewer endpoints (or none) without a word. Slices only manifests or a
 * controller writing around validation can hold (the API server refuses them).
 */
describe("endpointSliceProblems", () => {
  it.each([
    ["port 0", { ports: [{ name: "http", port: 0 }] }, ['port "http" has number 0, not 1-65535']],
    [
      "port 99999",
      { ports: [{ name: "http", port: 99_999 }] },
      ['port "http" has number 99999, not 1-65535'],
    ],
    ["a fractional port", { ports: [{ name: "", port: 80.5 }] }, ['port "" has number 80.5, not 1-65535']],
    [
      "an address out of range",
      { endpoints: [endpoint("999.1.1.1")] },
      ['endpoint 0 address "999.1.1.1" is not an IP address'],
    ],
    [
      "an IPv6 address in an IPv4 slice",
      { endpoints: [endpoint("fd00::1")] },
      ['endpoint 0 address "fd00::1" is not ipv4 (the slice\'s address type)'],
    ],
    [
      "an address with a zone id",
      { addressType: "IPv6", endpoints: [endpoint("fe80::1%eth0")] },
      ['endpoint 0 address "fe80::1%eth0" is not an IP address'],
    ],
    [
      "the unspecified address",
      { endpoints: [endpoint("0.0.0.0")] },
      ['endpoint 0 address "0.0.0.0" is unspecified'],
    ],
    [
      "a link-local address",
      { endpoints: [endpoint("169.254.169.254")] },
      ['endpoint 0 address "169.254.169.254" is link-local'],
    ],
    ["an endpoint without addresses", { endpoints: [endpoint([])] }, ["endpoint 0 has no address"]],
  ])("names %s", (_what, options, problems) => {
    expect(endpointSliceProblems(slice({ name: "a", ...options }))).toEqual(problems);
  });

  it("says nothing about a well-formed slice, nor about an FQDN one it ignores whole", () => {
    expect(
      endpointSliceProblems(slice({ name: "a", endpoints: [endpoint("10.0.0.1"), endpoint("127.0.0.1")] })),
    ).toEqual([]);
    expect(
      endpointSliceProblems(slice({ name: "b", addressType: "FQDN", endpoints: [endpoint("pod.test")] })),
    ).toEqual([]);
  });

  it("lists at most ten, then how many more", () => {
    const endpoints = Array.from({ length: 25 }, (_, i) => endpoint(`999.0.0.${i}`));
    const problems = endpointSliceProblems(slice({ name: "a", endpoints }));
    expect(problems).toHaveLength(11);
    expect(problems.at(-1)).toBe("and 15 more");
  });

  it("names exactly the endpoints the translation leaves out", () => {
    const bad = slice({
      name: "a",
      endpoints: [endpoint("999.1.1.1"), endpoint("fd00::1"), endpoint("10.0.0.1"), endpoint("224.0.0.1")],
    });
    const [port] = translateService(service({ ports: http }), [bad]);
    expect(port && [view(port.ipv4), view(port.ipv6)]).toEqual([fam(["10.0.0.1:8080"]), none]);
    expect(endpointSliceProblems(bad).map((problem) => problem.split(" ")[1])).toEqual(["0", "1", "3"]);
  });
});
