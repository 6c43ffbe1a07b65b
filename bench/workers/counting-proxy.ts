import { once } from "node:events";
import { createServer, type Socket, connect as tcpConnect } from "node:net";
import { createCommandReader } from "./resp-commands.js";

/**
 * A TCP proxy on loopback in front of one Redis that counts what crosses the wire: bytes each way and round
 * trips. A round trip (a "turn") is a client write burst that follows a server reply, or the connection's
 * first write: the client had to wait for an answer before it could say more. Commands written together
 * (a pipeline, or several sent in one tick) are one turn however many replies they get; awaiting each reply
 * before the next command makes one turn per command. Every byte the server sends belongs to the turn it
 * answers.
 *
 * Turns are classified by the commands they carry (only names are read, resp-commands.ts):
 * - handshake: before a connection's first query turn, made only of connection set-up commands (ioredis
 *   sends HELLO, AUTH, SELECT, CLIENT SETNAME/SETINFO, READONLY as configured, then INFO as its ready check).
 *   Workers pays these on every load: a socket cannot outlive the request that opened it in workerd.
 * - close: only QUIT.
 * - query: everything else.
 * The TCP (and, in production, TLS) handshake is not a turn here; `connections` counts how often it happens.
 */
export type TurnKind = "handshake" | "query" | "close";

export interface Turn {
  /** 1-based number of the proxied connection it belongs to. */
  readonly connection: number;
  readonly commands: readonly string[];
  readonly bytesToServer: number;
  readonly bytesToClient: number;
  readonly kind: TurnKind;
}

export interface KindCounts {
  readonly roundTrips: number;
  readonly bytes: number;
}

export interface WireCounts {
  /** TCP connections accepted. */
  readonly connections: number;
  /** Every turn, whatever its kind. */
  readonly roundTrips: number;
  /** Both directions. */
  readonly bytes: number;
  readonly bytesToServer: number;
  readonly bytesToClient: number;
  readonly commands: number;
  readonly byKind: Readonly<Record<TurnKind, KindCounts>>;
}

export interface CountingProxy {
  readonly port: number;
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /**
   * What crossed the wire since the last take (or the start), then starts a new window. Take it once the
   * measured clients have their last reply: a turn is listed in the window it started in.
   */
  take(): { readonly counts: WireCounts; readonly turns: readonly Turn[] };
  close(): Promise<void>;
}

const HANDSHAKE_COMMANDS = new Set(["HELLO", "AUTH", "SELECT", "CLIENT", "READONLY", "INFO"]);

interface OpenTurn {
  connection: number;
  commands: string[];
  bytesToServer: number;
  bytesToClient: number;
  kind: TurnKind | undefined;
}

interface ConnectionState {
  readonly id: number;
  current: OpenTurn | undefined;
  /** The server sent something since the client's last write: the client's next write starts a turn. */
  answered: boolean;
  /** A query turn has been seen: no later turn is a handshake. */
  queried: boolean;
}

function kindOf(turn: OpenTurn, queried: boolean): TurnKind {
  const { commands } = turn;
  if (commands.length > 0 && commands.every((name) => name === "QUIT")) return "close";
  if (!queried && commands.length > 0 && commands.every((name) => HANDSHAKE_COMMANDS.has(name)))
    return "handshake";
  return "query";
}

/** Listens on 127.0.0.1 (a free port) and forwards every connection to 127.0.0.1:`redisPort`. */
export async function startCountingProxy(redisPort: number): Promise<CountingProxy> {
  let nextConnection = 1;
  let window = { connections: 0, bytesToServer: 0, bytesToClient: 0, turns: [] as OpenTurn[] };
  const states = new Map<number, ConnectionState>();
  const sockets = new Set<Socket>();

  const finish = (state: ConnectionState) => {
    const turn = state.current;
    if (turn && turn.kind === undefined) {
      turn.kind = kindOf(turn, state.queried);
      if (turn.kind === "query") state.queried = true;
    }
  };

  const server = createServer((client) => {
    const state: ConnectionState = {
      id: nextConnection++,
      current: undefined,
      answered: true,
      queried: false,
    };
    states.set(state.id, state);
    window.connections++;
    const upstream = tcpConnect(redisPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const reader = createCommandReader();
    client.on("data", (chunk: Buffer) => {
      if (state.answered || !state.current) {
        finish(state);
        state.current = {
          connection: state.id,
          commands: [],
          bytesToServer: 0,
          bytesToClient: 0,
          kind: undefined,
        };
        window.turns.push(state.current);
        state.answered = false;
      }
      state.current.bytesToServer += chunk.length;
      state.current.commands.push(...reader.push(chunk));
      window.bytesToServer += chunk.length;
    });
    upstream.on("data", (chunk: Buffer) => {
      if (state.current) state.current.bytesToClient += chunk.length;
      state.answered = true;
      window.bytesToClient += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const closeBoth = () => {
      finish(state);
      states.delete(state.id);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", closeBoth);
    upstream.on("error", closeBoth);
    client.on("close", closeBoth);
    upstream.on("close", closeBoth);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("the counting proxy has no port");

  return {
    port: address.port,
    url: `redis://127.0.0.1:${address.port}`,
    take() {
      const taken = window;
      window = { connections: 0, bytesToServer: 0, bytesToClient: 0, turns: [] };
      const turns = taken.turns.map((turn): Turn => {
        const state = states.get(turn.connection);
        return { ...turn, kind: turn.kind ?? kindOf(turn, state?.queried ?? false) };
      });
      return { counts: countsOf(taken, turns), turns };
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function countsOf(
  window: { connections: number; bytesToServer: number; bytesToClient: number },
  turns: readonly Turn[],
): WireCounts {
  const byKind: Record<TurnKind, { roundTrips: number; bytes: number }> = {
    handshake: { roundTrips: 0, bytes: 0 },
    query: { roundTrips: 0, bytes: 0 },
    close: { roundTrips: 0, bytes: 0 },
  };
  let commands = 0;
  for (const turn of turns) {
    byKind[turn.kind].roundTrips++;
    byKind[turn.kind].bytes += turn.bytesToServer + turn.bytesToClient;
    commands += turn.commands.length;
  }
  return {
    connections: window.connections,
    roundTrips: turns.length,
    bytes: window.bytesToServer + window.bytesToClient,
    bytesToServer: window.bytesToServer,
    bytesToClient: window.bytesToClient,
    commands,
    byKind,
  };
}
