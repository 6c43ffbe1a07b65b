/**
 * The LIST `continue` token of the fake API server: opaque to clients, here the revision the list is
 * consistent at and the resourceVersion of the last item served. A token older than the compacted history
 * answers 410 Expired, as etcd's compaction does for the real one.
 */
export interface ContinueCursor {
  /** The revision the list is consistent at (its first page's). */
  readonly revision: number;
  /** The resourceVersion of the last item served. */
  readonly after: number;
}

export function encodeContinue(cursor: ContinueCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

export function decodeContinue(token: string): ContinueCursor | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Partial<ContinueCursor>;
    return Number.isInteger(parsed.revision) && Number.isInteger(parsed.after)
      ? { revision: Number(parsed.revision), after: Number(parsed.after) }
      : undefined;
  } catch {
    return undefined;
  }
}
