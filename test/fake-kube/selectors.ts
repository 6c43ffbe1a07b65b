import type { FakeObject } from "./store.js";

/**
 * Equality-based label and field selectors, the subset the API server documents as "equality-based"
 * (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors). Set-based
 * terms (`in`, `notin`) are refused with an error rather than silently ignored.
 */
export type ObjectFilter = (object: FakeObject) => boolean;

interface Term {
  readonly key: string;
  readonly op: "=" | "!=" | "exists" | "absent";
  readonly value: string;
}

function parseTerms(selector: string): Term[] {
  const terms: Term[] = [];
  for (const raw of selector.split(",")) {
    const text = raw.trim();
    if (text === "") continue;
    if (/\s(in|notin)\s/.test(text)) throw new Error(`set-based selector not supported: ${text}`);
    const notEqual = text.split("!=");
    if (notEqual.length === 2) {
      terms.push({ key: (notEqual[0] ?? "").trim(), op: "!=", value: (notEqual[1] ?? "").trim() });
      continue;
    }
    const equal = text.split(/==?/);
    if (equal.length === 2) {
      terms.push({ key: (equal[0] ?? "").trim(), op: "=", value: (equal[1] ?? "").trim() });
      continue;
    }
    if (text.startsWith("!")) terms.push({ key: text.slice(1), op: "absent", value: "" });
    else terms.push({ key: text, op: "exists", value: "" });
  }
  return terms;
}

function matches(terms: readonly Term[], lookup: (key: string) => string | undefined): boolean {
  return terms.every((term) => {
    const actual = lookup(term.key);
    switch (term.op) {
      case "=":
        return actual === term.value;
      case "!=":
        return actual !== term.value;
      case "exists":
        return actual !== undefined;
      case "absent":
        return actual === undefined;
    }
    return false;
  });
}

export function labelFilter(selector: string | null): ObjectFilter {
  if (!selector) return () => true;
  const terms = parseTerms(selector);
  return (object) => matches(terms, (key) => object.metadata.labels?.[key]);
}

export function fieldFilter(selector: string | null): ObjectFilter {
  if (!selector) return () => true;
  const terms = parseTerms(selector);
  for (const term of terms) {
    // `type` is a field the API server selects Secrets by (and only Secrets).
    if (term.key !== "metadata.name" && term.key !== "metadata.namespace" && term.key !== "type") {
      throw new Error(`field selector not supported: ${term.key}`);
    }
  }
  return (object) =>
    matches(terms, (key) =>
      key === "metadata.name"
        ? object.metadata.name
        : key === "type"
          ? ((object as { type?: unknown }).type as string | undefined)
          : object.metadata.namespace,
    );
}
