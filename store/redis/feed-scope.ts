import type { Cluster, Redis, RedisOptions } from "ioredis";
import { connectToSlotMaster } from "./slot-master.js";

/** What one change-feed loop follows, and on which connection. */
export interface FeedScope {
  /** For logs and health: the cluster name, or ALL_CLUSTERS. */
  readonly id: string;
  names(): string[];
  /** The blocking connection to read on; undefined ends the loop (its cluster left the store). */
  connection(): Promise<Redis | undefined>;
  /** After an error: a Redis Cluster loop drops its connection, so the next goes to the slot's current master. */
  failed(): void;
}

export interface SlotOptions {
  readonly client: Cluster;
  /** The cluster's change stream: its slot's master serves the feed. */
  readonly key: string;
  readonly connectionOptions: RedisOptions;
  /** Every feed connection, for close(). */
  readonly connections: Set<Redis>;
  /** Whether the reader still knows the cluster. */
  readonly followed: () => boolean;
}

/**
 * One cluster's feed on Redis Cluster: a connection to the master serving its stream's slot, made on first use
 * and dropped after an error (the next goes to the slot's current master); none once the reader forgot it.
 */
export class SlotFeedScope implements FeedScope {
  readonly id: string;
  readonly #cluster: string;
  readonly #slot: SlotOptions;
  #connection: Redis | undefined;

  constructor(cluster: string, slot: SlotOptions) {
    this.id = cluster;
    this.#cluster = cluster;
    this.#slot = slot;
  }

  names(): string[] {
    return [this.#cluster];
  }

  async connection(): Promise<Redis | undefined> {
    if (!this.#slot.followed()) {
      this.failed();
      return undefined;
    }
    if (!this.#connection) {
      this.#connection = await connectToSlotMaster(
        this.#slot.client,
        this.#slot.key,
        this.#slot.connectionOptions,
      );
      this.#slot.connections.add(this.#connection);
    }
    return this.#connection;
  }

  failed(): void {
    if (this.#connection) {
      this.#connection.disconnect();
      this.#slot.connections.delete(this.#connection);
    }
    this.#connection = undefined;
  }
}
