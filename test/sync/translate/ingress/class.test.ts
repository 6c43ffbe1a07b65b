import { describe, expect, it } from "vitest";
import { ingressClassChooser } from "../../../../sync/translate/ingress/class.js";
import { CONTROLLER, ingress, ingressClass } from "./fixtures.js";

const ours = ingressClass("edgeslice");
const nginx = ingressClass("nginx", "k8s.io/ingress-nginx");
const legacy = { "kubernetes.io/ingress.class": "edgeslice" };

describe("which Ingresses are ours", () => {
  it.each([
    ["ingressClassName naming our class", [ours, nginx], { ingressClassName: "edgeslice" }, {}, true],
    [
      "ingressClassName naming another controller's class",
      [ours, nginx],
      { ingressClassName: "nginx" },
      {},
      false,
    ],
    ["ingressClassName naming a class that does not exist", [ours], { ingressClassName: "ghost" }, {}, false],
    [
      "ingressClassName wins over a default class of ours",
      [ingressClass("edgeslice", CONTROLLER, true), nginx],
      { ingressClassName: "nginx" },
      {},
      false,
    ],
    ["the deprecated annotation naming our class", [ours, nginx], {}, legacy, true],
    [
      "the deprecated annotation naming another class",
      [ours, nginx],
      {},
      { "kubernetes.io/ingress.class": "nginx" },
      false,
    ],
    [
      "no class, and our class is the default",
      [ingressClass("edgeslice", CONTROLLER, true), nginx],
      {},
      {},
      true,
    ],
    [
      "no class, and another controller's class is the default",
      [ours, ingressClass("nginx", "k8s.io/ingress-nginx", true)],
      {},
      {},
      false,
    ],
    ["no class, and no default class", [ours, nginx], {}, {}, false],
    [
      "no class, and defaults of two controllers (ambiguous)",
      [ingressClass("edgeslice", CONTROLLER, true), ingressClass("nginx", "k8s.io/ingress-nginx", true)],
      {},
      {},
      false,
    ],
    [
      "no class, and two defaults both ours",
      [ingressClass("a", CONTROLLER, true), ingressClass("b", CONTROLLER, true)],
      {},
      {},
      true,
    ],
  ])("%s → %s", (_case, classes, spec, annotations, expected) => {
    const choose = ingressClassChooser(classes, CONTROLLER);
    expect(choose(ingress("web", spec, { annotations })).ours).toBe(expected);
  });

  it("says which field decided", () => {
    const choose = ingressClassChooser([ingressClass("edgeslice", CONTROLLER, true)], CONTROLLER);
    expect(choose(ingress("web", {})).why).toBe("default IngressClass edgeslice");
    expect(choose(ingress("web", {}, { annotations: legacy })).why).toBe(
      "kubernetes.io/ingress.class edgeslice",
    );
  });
});
