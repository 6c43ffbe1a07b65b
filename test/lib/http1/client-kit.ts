import { createServer as createHttpServer, type RequestListener } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import type { Readable } from "node:stream";
import type { ExchangeDispatcher, OutgoingRequest, RequestControl } from "../../../lib/http-exchange.js";
import type { PoolSettings } from "../../../lib/http1/origin-pool.js";
import { eventually } from "../../support/eventually.js";
import { ReadableBody } from "../../support/readable-body.js";

/** The pool settings of these tests unless one says otherwise. */
export const TEST_POOL_SETTINGS: PoolSettings = {
  connections: 128,
  connectTimeoutMs: 5_000,
  keepAliveTimeoutMs: 4_000,
  responseHeadTimeoutMs: 300_000,
  bodyTimeoutMs: 300_000,
};

/** Servers for the HTTP/1.1 client's tests, on 127.0.0.1 only: Node's own server, or raw bytes. */
export interface TestBackend {
  readonly port: number;
  /** Connections accepted so far. */
  connections: number;
  /** Request heads read so far (raw backends only). */
  readonly heads: string[];
  /** Every byte each connection received, in the order the connections came (raw backends only). */
  readonly received: string[];
  /** Connections open now. */
  open(): number;
  close(): Promise<void>;
}

async function listen(server: Server, sockets: Set<Socket>, backend: { connections: number }) {
  server.on("connection", (socket: Socket) => {
    backend.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return typeof address === "object" && address ? address.port : 0;
}

function closer(server: Server, sockets: Set<Socket>) {
  return () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
}

/** Node's HTTP server answering with `listener`. */
export async function httpBackend(
  listener: RequestListener,
  keepAliveTimeoutMs = 60_000,
): Promise<TestBackend> {
  const server = createHttpServer(listener);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  const sockets = new Set<Socket>();
  const backend = {
    connections: 0,
    heads: [] as string[],
    received: [] as string[],
    port: 0,
    open: () => sockets.size,
    close: closer(server, sockets),
  };
  backend.port = await listen(server, sockets, backend);
  return backend;
}

/** A backend that answers each request head it reads by calling `answer` with the connection's socket. */
export async function rawBackend(answer: (socket: Socket, head: string) => void): Promise<TestBackend> {
  const sockets = new Set<Socket>();
  const heads: string[] = [];
  const received: string[] = [];
  const server = createServer((socket) => {
    socket.on("error", () => undefined);
    const index = received.push("") - 1;
    let pending = "";
    socket.on("data", (chunk: Buffer) => {
      received[index] += chunk.toString("latin1");
      pending += chunk.toString("latin1");
      for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        heads.push(head);
        answer(socket, head);
      }
    });
  });
  const backend = {
    connections: 0,
    heads,
    received,
    port: 0,
    open: () => sockets.size,
    close: closer(server, sockets),
  };
  backend.port = await listen(server, sockets, backend);
  return backend;
}

export interface Outcome {
  status?: number;
  reason?: string;
  fields?: string[];
  transferCodings?: string | undefined;
  body: string;
  error?: Error & { code?: string; syscall?: string };
}

export interface Sent {
  /** Settles when the request completed or failed. */
  readonly done: Promise<Outcome>;
  readonly outcome: Outcome;
  control(): RequestControl;
}

/** Sends one request through `pool`; `takes` answers onData (true: keep reading). */
export function sendVia(
  pool: ExchangeDispatcher,
  request: Partial<Omit<OutgoingRequest, "body">> & { body?: Readable | null } = {},
  takes: () => boolean = () => true,
): Sent {
  const outcome: Outcome = { body: "" };
  let control: RequestControl | undefined;
  const done = new Promise<Outcome>((resolve) => {
    pool.dispatch(
      {
        method: request.method ?? "GET",
        path: request.path ?? "/",
        headers: request.headers ?? ["host", "backend.test"],
        body: request.body ? new ReadableBody(request.body) : null,
        contentLength: request.contentLength,
        transferCodings: request.transferCodings,
      },
      {
        onStart: (given) => {
          control = given;
        },
        onHead: ({ status, reason, fields, transferCodings }) =>
          Object.assign(outcome, { status, reason, fields, transferCodings }),
        onData: (chunk) => {
          outcome.body += chunk.toString("latin1");
          return takes();
        },
        onComplete: () => resolve(outcome),
        onError: (error) => {
          outcome.error = error;
          resolve(outcome);
        },
      },
    );
  });
  return {
    done,
    outcome,
    control: () => {
      if (!control) throw new Error("not started");
      return control;
    },
  };
}

/** Polls `condition` until it holds, failing after 5 s with `what`. */
export const until = (condition: () => boolean | Promise<boolean>, what: string) =>
  eventually(condition, 5_000, what);
