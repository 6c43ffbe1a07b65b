import { describe, expect, it } from "vitest";
import { translateService } from "../../../sync/translate/backends.js";
import {
  endpoint,
  fam,
  http,
  none,
  service,
  slice,
  type TranslationRow,
  translationCases,
} from "./fixtures.js";

/** Service port to slice port matching: by name and protocol, one entry per Service port (rule 3). */
const rows: TranslationRow[] = [
  {
    case: "keeps the same IP on two different target ports as two backends",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "b", ports: [{ name: "http", port: 9090 }], endpoints: [endpoint("10.0.0.1")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080", "10.0.0.1:9090"]), ipv6: none }],
  },
  {
    case: "skips a slice whose port name does not match the Service port",
    ports: http,
    slices: [
      slice({ name: "a", ports: [{ name: "metrics", port: 9100 }], endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.2")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "matches an unnamed Service port to an unnamed or empty-named slice port",
    ports: [{ port: 80 }],
    slices: [
      slice({ name: "a", ports: [{ port: 8080 }], endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "b", ports: [{ name: "", port: 8080 }], endpoints: [endpoint("10.0.0.2")] }),
      slice({ name: "c", ports: [{ name: "http", port: 8080 }], endpoints: [endpoint("10.0.0.3")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080", "10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "translates each of several Service ports in spec order",
    ports: [
      { name: "https", port: 443 },
      { name: "http", port: 80 },
    ],
    slices: [
      slice({
        name: "a",
        ports: [
          { name: "http", port: 8080 },
          { name: "https", port: 8443 },
        ],
        endpoints: [endpoint("10.0.0.1")],
      }),
    ],
    expected: [
      { ipv4: fam(["10.0.0.1:8443"]), ipv6: none },
      { ipv4: fam(["10.0.0.1:8080"]), ipv6: none },
    ],
  },
  {
    case: "adds nothing from a slice port with a null number",
    ports: http,
    slices: [slice({ name: "a", ports: [{ name: "http", port: null }], endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "adds nothing from a slice port with number zero",
    ports: http,
    slices: [slice({ name: "a", ports: [{ name: "http", port: 0 }], endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "adds nothing from a slice without ports",
    ports: http,
    slices: [slice({ name: "a", ports: null, endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "matches the protocol, defaulting to TCP on both sides",
    ports: [
      { name: "dns", port: 53 },
      { name: "dns", port: 53, protocol: "UDP" },
    ],
    slices: [
      slice({
        name: "a",
        ports: [{ name: "dns", port: 5353, protocol: "UDP" }],
        endpoints: [endpoint("10.0.0.1")],
      }),
      slice({ name: "b", ports: [{ name: "dns", port: 5300 }], endpoints: [endpoint("10.0.0.2")] }),
    ],
    expected: [
      { ipv4: fam(["10.0.0.2:5300"]), ipv6: none },
      { ipv4: fam(["10.0.0.1:5353"]), ipv6: none },
    ],
  },
  {
    case: "gives a Service with zero endpoints one empty entry per port",
    ports: [
      { name: "http", port: 80 },
      { name: "https", port: 443 },
    ],
    slices: [],
    expected: [
      { ipv4: none, ipv6: none },
      { ipv4: none, ipv6: none },
    ],
  },
  {
    case: "gives a Service without ports no entries",
    ports: [],
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1")] })],
    expected: [],
  },
];

describe("translateService", () => {
  translationCases(rows);

  it("reports the Service port with protocol defaulted to TCP", () => {
    const result = translateService(
      service({ ports: [{ port: 80 }, { name: "dns", port: 53, protocol: "UDP" }] }),
      [],
    );
    expect(result.map((entry) => entry.port)).toEqual([
      { name: "", number: 80, protocol: "TCP" },
      { name: "dns", number: 53, protocol: "UDP" },
    ]);
  });
});
