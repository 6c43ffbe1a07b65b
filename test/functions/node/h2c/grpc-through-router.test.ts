import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import {
  ECHO_SERVICE,
  type EchoBackend,
  type EchoClientInstance,
  echoClient,
  startEchoBackend,
  unary,
} from "../../../support/grpc-echo.js";
import { closeAfterEach, startNodeRouterOver } from "../../harness.js";
import { publishH2c } from "./h2c-kit.js";

/**
 * A real gRPC client (@grpc/grpc-js, h2c prior knowledge to the router's PORT) through the Node router to real
 * gRPC servers on loopback, reached over h2c as a GRPCRoute's backends are.
 */
const closing = closeAfterEach();
const clients: EchoClientInstance[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

async function setUp(config = {}): Promise<{ backend: EchoBackend; client: EchoClientInstance }> {
  const backend = await closing(startEchoBackend("backend-a"));
  const router = await closing(startNodeRouterOver({ config }));
  await publishH2c(router.store, [backend.port], { source: "grpcroute" });
  const client = echoClient(router.port);
  clients.push(client);
  return { backend, client };
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const bytes = (value: Buffer) => value;
const metadata = () => new grpc.Metadata();

describe("gRPC through the router", () => {
  it("answers a unary call, its trailers relayed", async () => {
    const { client } = await setUp();
    const result = await unary(client, "Echo", "hello");
    expect(result.ok && result.text).toBe("backend-a hello");
    expect(result.ok && result.trailers.get("x-backend")).toEqual(["backend-a"]);
  });

  it("relays a server's error status and message", async () => {
    const { client } = await setUp();
    expect(await unary(client, "Echo", "fail:5")).toEqual({
      ok: false,
      code: grpc.status.NOT_FOUND,
      details: "failed as asked by backend-a",
    });
  });

  it("relays a server's UNIMPLEMENTED for a method it does not have", async () => {
    const { client } = await setUp();
    const result = await unary(client, "EchoThree", "x");
    expect(!result.ok && result.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it("streams a server's messages as they come", async () => {
    const { client } = await setUp();
    const call = client.makeServerStreamRequest<Buffer, Buffer>(
      ECHO_SERVICE.Count.path,
      bytes,
      bytes,
      Buffer.from("5"),
      metadata(),
      {},
    );
    const got: string[] = [];
    call.on("data", (chunk: Buffer) => got.push(chunk.toString()));
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    expect(status.code).toBe(grpc.status.OK);
    expect(got).toEqual([0, 1, 2, 3, 4].map((i) => `backend-a ${i}`));
  });

  it("streams a client's messages to the server", async () => {
    const { client } = await setUp();
    const answer = new Promise<string>((resolve, reject) => {
      const call = client.makeClientStreamRequest<Buffer, Buffer>(
        ECHO_SERVICE.Join.path,
        bytes,
        bytes,
        metadata(),
        {},
        (error, value) => (error ? reject(error) : resolve(value?.toString() ?? "")),
      );
      for (const part of ["a", "b", "c", "d"]) call.write(Buffer.from(part));
      call.end();
    });
    expect(await answer).toBe("backend-a a,b,c,d");
  });

  it("carries a bidi stream both ways, each answer before the next message is sent", async () => {
    const { client } = await setUp();
    const call = client.makeBidiStreamRequest<Buffer, Buffer>(
      ECHO_SERVICE.Chat.path,
      bytes,
      bytes,
      metadata(),
      {},
    );
    const answers: string[] = [];
    for (const word of ["one", "two", "three"]) {
      const next = new Promise<string>((resolve) =>
        call.once("data", (chunk: Buffer) => resolve(chunk.toString())),
      );
      call.write(Buffer.from(word));
      answers.push(await next);
    }
    call.end();
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    expect([answers, status.code]).toEqual([
      ["backend-a one", "backend-a two", "backend-a three"],
      grpc.status.OK,
    ]);
  });

  /** A server-streaming Count call whose first message arrived: the stream is open at both ends. */
  const countingCallUnderWay = async (client: grpc.Client) => {
    const call = client.makeServerStreamRequest<Buffer, Buffer>(
      ECHO_SERVICE.Count.path,
      bytes,
      bytes,
      Buffer.from("0"),
      metadata(),
      {},
    );
    call.on("error", () => undefined);
    await new Promise((resolve) => call.once("data", resolve));
    return call;
  };

  it("passes a client's cancellation on to the server", async () => {
    const { backend, client } = await setUp();
    const call = await countingCallUnderWay(client);
    call.cancel();
    await until(() => backend.cancelled.includes("Count"), "the server to see the call cancelled");
  });

  it("ends the client's call with an error when the server's stream goes away mid-call", async () => {
    const { backend, client } = await setUp();
    const call = await countingCallUnderWay(client);
    const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    await backend.close();
    expect((await status).code).not.toBe(grpc.status.OK);
  });

  it("answers DEADLINE_EXCEEDED when the client's deadline passes", async () => {
    const { client } = await setUp();
    const result = await unary(client, "Hang", "x", { deadline: Date.now() + 200 });
    expect(!result.ok && result.code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it("answers DEADLINE_EXCEEDED itself when the backend does not answer within the router's timeout", async () => {
    const { client } = await setUp({ tryTimeoutMs: 200, totalTimeoutMs: 300, retries: 0 });
    const result = await unary(client, "Hang", "x");
    expect(result).toEqual({
      ok: false,
      code: grpc.status.DEADLINE_EXCEEDED,
      details: "edgeslice: upstream_timeout",
    });
  });

  it("answers UNAVAILABLE for a Service without endpoints, and UNIMPLEMENTED for a host no route serves", async () => {
    const router = await closing(startNodeRouterOver());
    await publishH2c(router.store, [], { source: "grpcroute" });
    const client = echoClient(router.port);
    const elsewhere = echoClient(router.port, "nowhere.example");
    clients.push(client, elsewhere);
    expect(await unary(client, "Echo", "x")).toEqual({
      ok: false,
      code: grpc.status.UNAVAILABLE,
      details: "edgeslice: no_endpoints",
    });
    expect(await unary(elsewhere, "Echo", "x")).toEqual({
      ok: false,
      code: grpc.status.UNIMPLEMENTED,
      details: "edgeslice: no_route",
    });
  });
});
