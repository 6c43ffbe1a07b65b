import type { Ingress, IngressClass } from "./objects.js";

/** IngressClass annotation marking the cluster's default class (networking.k8s.io/v1 IngressClass). */
export const DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class";
/** The deprecated class annotation, read when spec.ingressClassName is not set. */
export const CLASS_ANNOTATION = "kubernetes.io/ingress.class";

export interface ClassChoice {
  readonly ours: boolean;
  /** Which field decided, and the class it named: for logs and explain. */
  readonly why: string;
}

/**
 * Which Ingresses are ours, given the cluster's IngressClasses and our `spec.controller` value:
 * - `spec.ingressClassName` names an IngressClass whose controller is ours;
 * - else the deprecated `kubernetes.io/ingress.class` annotation names one;
 * - else (an Ingress created before any default class existed: the DefaultIngressClass admission plugin
 *   fills ingressClassName on creation otherwise) the cluster's default class decides: ours when at least
 *   one class carries `ingressclass.kubernetes.io/is-default-class: "true"` and every such class is ours.
 *   Several defaults of different controllers are ambiguous, so none of them takes the Ingress.
 */
export function ingressClassChooser(
  classes: readonly IngressClass[],
  controllerName: string,
): (ingress: Ingress) => ClassChoice {
  const ours = new Set(
    classes.filter((item) => item.spec?.controller === controllerName).map((item) => item.metadata.name),
  );
  const defaults = classes.filter((item) => item.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true");
  const defaultIsOurs = defaults.length > 0 && defaults.every((item) => ours.has(item.metadata.name));
  const defaultNames = defaults.map((item) => item.metadata.name).sort();

  return (ingress) => {
    const named = ingress.spec?.ingressClassName;
    if (named) return { ours: ours.has(named), why: `ingressClassName ${named}` };
    const annotated = ingress.metadata.annotations?.[CLASS_ANNOTATION];
    if (annotated) return { ours: ours.has(annotated), why: `${CLASS_ANNOTATION} ${annotated}` };
    if (defaults.length === 0) return { ours: false, why: "no class and no default IngressClass" };
    return { ours: defaultIsOurs, why: `default IngressClass ${defaultNames.join(", ")}` };
  };
}
