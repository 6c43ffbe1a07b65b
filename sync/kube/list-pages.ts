import { ApiStatusError } from "./api-errors.js";
import type { KubeApi } from "./kube-api.js";

export interface ListPage {
  readonly items: readonly unknown[];
  /** True when this page starts the list over (the continue token expired): forget what earlier pages gave. */
  readonly restarted: boolean;
}

/**
 * One complete LIST of a collection in pages of `pageSize` (limit/continue,
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks): every
 * page is handed to `onPage` as it arrives, so a large collection is never held whole. A continue token that
 * outlived etcd's compaction (410) starts the list over. Resolves the list's resourceVersion; rejects on any
 * other failure, or once `signal` aborts (never resolving a list cut short).
 */
export async function listInPages(
  api: KubeApi,
  path: string,
  options: { pageSize: number; signal: AbortSignal; onPage: (page: ListPage) => void },
): Promise<string> {
  let resourceVersion = "";
  let continueToken: string | undefined;
  let restarted = false;
  do {
    const response = await api.call("GET", path, {
      query: { limit: options.pageSize, continue: continueToken },
      timeoutMs: 60_000,
      signal: options.signal,
    });
    options.signal.throwIfAborted();
    if (response.status === 410 && continueToken !== undefined) {
      continueToken = undefined;
      restarted = true;
      continue;
    }
    if (response.status !== 200) {
      throw new ApiStatusError(response.status, response.body, response.retryAfterSeconds);
    }
    const page = response.body as {
      metadata?: { resourceVersion?: string; continue?: string };
      items?: unknown[];
    };
    options.onPage({ items: page.items ?? [], restarted });
    restarted = false;
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    continueToken = page.metadata?.continue || undefined;
  } while (continueToken !== undefined);
  return resourceVersion;
}
