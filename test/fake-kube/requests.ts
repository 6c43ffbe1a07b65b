import { type FakeKind, RESOURCES, type ResourcePath } from "./resources.js";

/** What a request asks the fake API server to do. */
export type Verb = "list" | "watch" | "get" | "create" | "update" | "status";

export interface FailureRule {
  readonly verb?: Verb;
  readonly kind?: FakeKind;
}

export function verbOf(method: string | undefined, path: ResourcePath, url: URL): Verb | undefined {
  if (path.subresource === "status")
    return method === "PUT" ? "status" : method === "GET" ? "get" : undefined;
  const scoped = path.namespace !== undefined || !RESOURCES[path.kind].namespaced;
  if (method === "GET") {
    if (path.name) return "get";
    return url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1"
      ? "watch"
      : "list";
  }
  if (method === "POST" && !path.name && scoped) return "create";
  if (method === "PUT" && path.name && scoped) return "update";
  return undefined;
}

/** Every request seen, by verb and by verb and kind, faulted ones included. */
export class RequestCounter {
  private readonly counts = new Map<string, number>();

  count(verb: Verb, kind: FakeKind): void {
    for (const key of [verb, `${verb} ${kind}`]) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  requests(verb: Verb, kind?: FakeKind): number {
    return this.counts.get(kind ? `${verb} ${kind}` : verb) ?? 0;
  }
}

interface PendingFailure {
  remaining: number;
  readonly status: number;
  readonly rule: FailureRule;
}

/** Failures a test injected: the next `count` requests matching a rule get its status. */
export class FailureQueue {
  private readonly failures: PendingFailure[] = [];

  add(count: number, status: number, rule: FailureRule): void {
    this.failures.push({ remaining: count, status, rule });
  }

  clear(): void {
    this.failures.length = 0;
  }

  /** The status to answer this request with, if an injected failure matches it. */
  take(verb: Verb, kind: FakeKind): number | undefined {
    const index = this.failures.findIndex(
      (f) => f.remaining > 0 && (f.rule.verb ?? verb) === verb && (f.rule.kind ?? kind) === kind,
    );
    const failure = this.failures[index];
    if (!failure) return undefined;
    failure.remaining -= 1;
    if (failure.remaining === 0) this.failures.splice(index, 1);
    return failure.status;
  }
}
