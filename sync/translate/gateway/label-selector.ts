import type { LabelSelector } from "./objects.js";

const OPERATORS = new Set(["In", "NotIn", "Exists", "DoesNotExist"]);

/** A selector this code can evaluate: every operator known (metav1.LabelSelectorRequirement). */
export function selectorProblem(selector: LabelSelector): string | undefined {
  for (const expression of selector.matchExpressions ?? []) {
    if (!OPERATORS.has(expression.operator)) return `unknown selector operator "${expression.operator}"`;
    const needsValues = expression.operator === "In" || expression.operator === "NotIn";
    if (needsValues && (expression.values ?? []).length === 0) {
      return `selector operator ${expression.operator} needs values`;
    }
  }
  return undefined;
}

/**
 * metav1.LabelSelector semantics: every matchLabels pair and every expression must hold; an empty
 * selector selects everything. An invalid selector selects nothing.
 */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  if (selectorProblem(selector) !== undefined) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expression of selector.matchExpressions ?? []) {
    const value = labels[expression.key];
    const values = expression.values ?? [];
    const holds =
      expression.operator === "In"
        ? value !== undefined && values.includes(value)
        : expression.operator === "NotIn"
          ? value === undefined || !values.includes(value)
          : expression.operator === "Exists"
            ? value !== undefined
            : value === undefined;
    if (!holds) return false;
  }
  return true;
}
