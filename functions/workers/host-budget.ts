/**
 * The hosts a Workers isolate holds in host mode, within a memory budget (docs/design.md, the host budget
 * rule): each host costs the serialized size of the records its cold read brought (a fair estimate of what
 * their decoded form takes), every use makes it the most recent, and the least recently used hosts go once
 * the total is over the budget. The host of the request being served is never evicted: a request always
 * gets its own records, even one larger than the whole budget.
 */
export interface HostBudget {
  /** Holds `host` at `bytes` (replacing what it cost before) as the most recently used. */
  hold(host: string, bytes: number): void;
  /** Makes `host` the most recently used; false when it is not held. */
  touch(host: string): boolean;
  has(host: string): boolean;
  /** Stops holding `host`. */
  release(host: string): void;
  /** Evicts least recently used hosts, never `keep`, until the total fits; the evicted, oldest first. */
  evict(keep: string | undefined): string[];
  /** Held hosts, least recently used first. */
  hosts(): string[];
  totalBytes(): number;
  clear(): void;
}

export function createHostBudget(budgetBytes: number): HostBudget {
  // A Map iterates in insertion order: deleting and setting again moves a host to the most recent end.
  const held = new Map<string, number>();
  let total = 0;
  const drop = (host: string) => {
    total -= held.get(host) ?? 0;
    held.delete(host);
  };
  return {
    hold(host, bytes) {
      drop(host);
      held.set(host, bytes);
      total += bytes;
    },
    touch(host) {
      const bytes = held.get(host);
      if (bytes === undefined) return false;
      held.delete(host);
      held.set(host, bytes);
      return true;
    },
    has: (host) => held.has(host),
    release: drop,
    evict(keep) {
      const evicted: string[] = [];
      for (const host of [...held.keys()]) {
        if (total <= budgetBytes) break;
        if (host === keep) continue;
        drop(host);
        evicted.push(host);
      }
      return evicted;
    },
    hosts: () => [...held.keys()],
    totalBytes: () => total,
    clear() {
      held.clear();
      total = 0;
    },
  };
}
