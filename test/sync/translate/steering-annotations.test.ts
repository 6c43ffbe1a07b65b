import { describe, expect, it } from "vitest";
import type { ServiceSteering } from "../../../store/steering.js";
import { serviceRecordOf } from "../../../sync/translate/service-record.js";
import { parseClusterWeights, steeringOf } from "../../../sync/translate/steering-annotations.js";
import { endpoint, service, slice } from "./fixtures.js";

const annotated = (annotations: Record<string, string>) => service({ annotations });

describe("steering annotations", () => {
  it.each<[string, Record<string, string>, ServiceSteering | undefined]>([
    ["none: the router's CLUSTER_STEERING applies", {}, undefined],
    ["a policy", { "edgeslice.io/cluster-steering": " latency " }, { policy: "latency" }],
    ["local-first, named", { "edgeslice.io/cluster-steering": "local-first" }, { policy: "local-first" }],
    [
      "weighted without weights: equal shares",
      { "edgeslice.io/cluster-steering": "weighted" },
      { policy: "weighted" },
    ],
    [
      "weights alone: weighted, sorted by cluster",
      { "edgeslice.io/cluster-weights": "west=10, east=90," },
      {
        policy: "weighted",
        weights: [
          { cluster: "east", weight: 90 },
          { cluster: "west", weight: 10 },
        ],
      },
    ],
    [
      "weighted with weights, one of them 0 (a cluster being drained)",
      { "edgeslice.io/cluster-steering": "weighted", "edgeslice.io/cluster-weights": "east=0,west=100" },
      {
        policy: "weighted",
        weights: [
          { cluster: "east", weight: 0 },
          { cluster: "west", weight: 100 },
        ],
      },
    ],
  ])("reads %s", (_name, annotations, expected) => {
    expect(steeringOf(annotated(annotations))).toEqual({ ok: true, value: expected });
  });

  it.each<[string, Record<string, string>, string]>([
    ["an unknown policy", { "edgeslice.io/cluster-steering": "geo" }, "is not one of local-first, proximity"],
    [
      "weights with another policy",
      { "edgeslice.io/cluster-steering": "latency", "edgeslice.io/cluster-weights": "east=1" },
      "applies to the weighted policy only",
    ],
    [
      "a weight that is no whole number",
      { "edgeslice.io/cluster-weights": "east=1.5" },
      "is not cluster=weight",
    ],
    ["a negative weight", { "edgeslice.io/cluster-weights": "east=-1" }, "is not cluster=weight"],
    ["a weight past the cap", { "edgeslice.io/cluster-weights": "east=2000000" }, "is not cluster=weight"],
    ["a cluster name with capitals", { "edgeslice.io/cluster-weights": "East=1" }, "is not a cluster name"],
    ["a cluster listed twice", { "edgeslice.io/cluster-weights": "east=1,east=2" }, "listed twice"],
    ["every weight 0", { "edgeslice.io/cluster-weights": "east=0,west=0" }, "every cluster weight 0"],
    ["no cluster at all", { "edgeslice.io/cluster-weights": " , " }, "lists no cluster"],
  ])("refuses %s, naming the annotation", (_name, annotations, problem) => {
    const result = steeringOf(annotated(annotations));
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error).toContain(problem);
    expect(result.ok ? "" : result.error).toMatch(/^edgeslice\.io\/cluster-(steering|weights): /);
  });

  it("reads the weights of a migration as the annotation's example writes them", () => {
    expect(parseClusterWeights("east=90,west=10")).toEqual({
      ok: true,
      value: [
        { cluster: "east", weight: 90 },
        { cluster: "west", weight: 10 },
      ],
    });
  });
});

describe("the service record carries the steering", () => {
  const slices = [slice({ name: "web-1", endpoints: [endpoint("10.0.0.1")] })];

  it("writes the annotations' steering into the record every route to the Service reads", () => {
    const record = serviceRecordOf(
      "east",
      annotated({ "edgeslice.io/cluster-steering": "proximity" }),
      slices,
      new Set([80]),
    );
    expect(record.ok && record.value?.steering).toEqual({ policy: "proximity" });
  });

  it("publishes the backends without steering when the annotation is malformed", () => {
    const record = serviceRecordOf(
      "east",
      annotated({ "edgeslice.io/cluster-steering": "fastest" }),
      slices,
      new Set([80]),
    );
    expect(record.ok && record.value?.ports[0]?.ipv4.endpoints).toHaveLength(1);
    expect(record.ok && record.value?.steering).toBeUndefined();
  });
});
