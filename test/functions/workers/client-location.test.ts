import { describe, expect, it } from "vitest";
import { clientLocationOf } from "../../../functions/workers/client-location.js";

describe("the client's place from request.cf", () => {
  it.each<[string, unknown, ReturnType<typeof clientLocationOf>]>([
    [
      "reads coordinates, continent and colo as Cloudflare sets them",
      { latitude: "50.11040", longitude: "8.68213", continent: "EU", colo: "FRA", country: "DE" },
      { point: { lat: 50.1104, long: 8.68213 }, continent: "EU", colo: "FRA" },
    ],
    ["keeps the continent when the coordinates are missing", { continent: "NA" }, { continent: "NA" }],
    [
      "leaves out coordinates off the globe",
      { latitude: "95", longitude: "8", colo: "FRA" },
      { colo: "FRA" },
    ],
    ["leaves out coordinates given as numbers, not as documented", { latitude: 50, longitude: 8 }, undefined],
    ["leaves out a malformed continent", { continent: "Europe" }, undefined],
    ["has no place without cf (a test, a local dev server)", undefined, undefined],
    ["has no place for a cf that is no object", "cf", undefined],
  ])("%s", (_name, cf, expected) => {
    expect(clientLocationOf(cf)).toEqual(expected);
  });
});
