import { describe, expect, it } from "vitest";
import { translateService } from "../../../sync/translate/backends.js";
import {
  endpoint,
  fam,
  http,
  NOT_READY,
  none,
  service,
  slice,
  TERMINATING_GONE,
  TERMINATING_SERVING,
  type TranslationRow,
  translationCases,
} from "./fixtures.js";

/** Endpoint conditions, fallback and duplicates (docs/design.md, translation rules 5 and 6). */
const rows: TranslationRow[] = [
  {
    case: "keeps a ready endpoint with the slice's port number",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "treats nil ready, serving and terminating as true, true, false",
    ports: http,
    slices: [
      slice({
        name: "a",
        endpoints: [
          endpoint("10.0.0.1", null),
          endpoint("10.0.0.2", { ready: null, serving: null, terminating: null }),
        ],
      }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080", "10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "treats nil ready on a terminating serving endpoint as ready",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1", { serving: true, terminating: true })] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"], false, ["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "leaves out a not-ready endpoint while others are ready",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1"), endpoint("10.0.0.2", NOT_READY)] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "lists serving-terminating endpoints as draining next to ready ones",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1"), endpoint("10.0.0.2", TERMINATING_SERVING)] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"], false, ["10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "falls back to serving-terminating endpoints when none is ready",
    ports: http,
    slices: [
      slice({
        name: "a",
        endpoints: [
          endpoint("10.0.0.2", TERMINATING_SERVING),
          endpoint("10.0.0.1", TERMINATING_SERVING),
          endpoint("10.0.0.3", TERMINATING_GONE),
        ],
      }),
    ],
    expected: [
      { ipv4: fam(["10.0.0.1:8080", "10.0.0.2:8080"], true, ["10.0.0.1:8080", "10.0.0.2:8080"]), ipv6: none },
    ],
  },
  {
    case: "is empty, not fallback, when every endpoint is terminating and not serving",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1", TERMINATING_GONE)] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "falls back in one family only on a dual-stack Service",
    ports: http,
    slices: [
      slice({ name: "v4", endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "v6", addressType: "IPv6", endpoints: [endpoint("fd00::1", TERMINATING_SERVING)] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: fam(["[fd00::1]:8080"], true, ["[fd00::1]:8080"]) }],
  },
  {
    case: "prefers a not-terminating copy of a duplicate over a terminating one",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", TERMINATING_SERVING)] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1", NOT_READY)] }),
    ],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "prefers a ready copy of a duplicate over a not-ready one",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", NOT_READY)] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "prefers a serving copy of a duplicate when neither is ready",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", TERMINATING_GONE)] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1", TERMINATING_SERVING)] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"], true, ["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "breaks a rank tie on the lexically first slice name",
    ports: http,
    slices: [
      slice({ name: "web-b", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-b" })] }),
      slice({ name: "web-a", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-a" })] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "keeps one copy of an address listed twice in the same slice",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1"), endpoint("10.0.0.1")] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
];

describe("translateService", () => {
  translationCases(rows);

  it("picks the same copy of an address listed twice in one slice whatever their order", () => {
    const copies = [
      endpoint("10.0.0.1", null, { zone: "zone-b" }),
      endpoint("10.0.0.1", null, { zone: "zone-a" }),
    ];
    const forward = translateService(service({ ports: http }), [slice({ name: "a", endpoints: copies })]);
    const reversed = translateService(service({ ports: http }), [
      slice({ name: "a", endpoints: [...copies].reverse() }),
    ]);
    expect(reversed).toEqual(forward);
    expect(forward[0]?.ipv4.endpoints).toHaveLength(1);
  });
});
