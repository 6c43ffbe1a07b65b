import type { RouteMatch } from "../../../store/routes.js";

/**
 * A large host bucket's candidates indexed by path, so a request looks only at the candidates its path can
 * match rather than at every rule of the host (a cluster can publish thousands). Candidates keep the bucket's
 * precedence order (precedence.ts) within each list, and the lists come in that order too: Exact before any
 * PathPrefix, a longer prefix before a shorter one (two prefixes of one length cannot both match a path), the
 * fallback routes last.
 */
export interface IndexedCandidate {
  readonly match: RouteMatch;
  /** The normalised PathPrefix value; undefined for Exact. */
  readonly prefix: string | undefined;
  readonly rank: { readonly fallback: boolean };
}

export interface PathIndex<C> {
  readonly exact: ReadonlyMap<string, readonly C[]>;
  /** The prefix `/`; its children are the prefixes one path segment longer, and so on. */
  readonly prefixes: PrefixNode<C>;
  /** Fallback candidates, in order, matched as a bucket is. */
  readonly fallback: readonly C[];
}

interface PrefixNode<C> {
  readonly candidates: C[];
  readonly children: Map<string, PrefixNode<C>>;
}

/** Buckets of at least this many candidates are indexed; a shorter one is cheaper to scan. */
export const INDEXED_BUCKET_SIZE = 64;

/** `bucket` in precedence order. */
export function buildPathIndex<C extends IndexedCandidate>(bucket: readonly C[]): PathIndex<C> {
  const exact = new Map<string, C[]>();
  const prefixes: PrefixNode<C> = { candidates: [], children: new Map() };
  const fallback: C[] = [];
  for (const candidate of bucket) {
    if (candidate.rank.fallback) fallback.push(candidate);
    else if (candidate.prefix === undefined) {
      const value = candidate.match.path.value;
      const list = exact.get(value);
      if (list) list.push(candidate);
      else exact.set(value, [candidate]);
    } else nodeOf(prefixes, candidate.prefix).candidates.push(candidate);
  }
  return { exact, prefixes, fallback };
}

function nodeOf<C>(root: PrefixNode<C>, prefix: string): PrefixNode<C> {
  let node = root;
  if (prefix === "/") return node;
  for (const segment of prefix.slice(1).split("/")) {
    let child = node.children.get(segment);
    if (!child) {
      child = { candidates: [], children: new Map() };
      node.children.set(segment, child);
    }
    node = child;
  }
  return node;
}

/**
 * The candidate lists a request for `path` (without its query) can match, in precedence order. A PathPrefix
 * matches whole segments (request-match.ts hasPathPrefix), so the prefixes are found by walking the path's
 * segments down from `/`: the walk stops where no indexed prefix goes on, whatever the path's length.
 */
export function pathCandidates<C>(index: PathIndex<C>, path: string): (readonly C[])[] {
  const lists: (readonly C[])[] = [];
  const exact = index.exact.get(path);
  if (exact) lists.push(exact);
  if (path.startsWith("/")) {
    const nodes: PrefixNode<C>[] = [index.prefixes];
    let node: PrefixNode<C> | undefined = index.prefixes;
    let from = 1;
    while (node.children.size > 0) {
      const slash = path.indexOf("/", from);
      node = node.children.get(path.slice(from, slash < 0 ? path.length : slash));
      if (!node) break;
      nodes.push(node);
      if (slash < 0) break;
      from = slash + 1;
    }
    for (let i = nodes.length - 1; i >= 0; i--) {
      const candidates = (nodes[i] as PrefixNode<C>).candidates;
      if (candidates.length > 0) lists.push(candidates);
    }
  }
  if (index.fallback.length > 0) lists.push(index.fallback);
  return lists;
}
