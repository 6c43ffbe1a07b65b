import { afterEach, describe, expect, it } from "vitest";
import { ECHO_SERVICE_NAME, startEchoBackend } from "../../support/grpc-echo.js";
import { cleanups, field, openSession, post, runCleanups, send } from "./h2-kit.js";

/** Unary gRPC calls to a grpc-js server through the client, as the router makes them. */

afterEach(runCleanups);

function framed(text: string): Buffer {
  const message = Buffer.from(text);
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

const GRPC_FIELDS = ["content-type", "application/grpc", "te", "trailers"];

describe("the HTTP/2 client against grpc-js", () => {
  it("makes unary calls with their message and trailers, many on one session", async () => {
    const backend = await startEchoBackend("pod-a");
    cleanups.push(() => backend.close());
    const { session } = openSession(backend.port);
    const calls = Array.from({ length: 50 }, (_, i) =>
      send(session, post(backend.port, `/${ECHO_SERVICE_NAME}/Echo`, GRPC_FIELDS), framed(`hello ${i}`)),
    );
    await Promise.all(calls.map(({ record }) => record.done));
    calls.forEach(({ record }, i) => {
      expect(record.status).toBe(200);
      expect(field(record.fields, "content-type")).toBe("application/grpc+proto");
      expect(Buffer.concat(record.chunks).subarray(5).toString()).toBe(`pod-a hello ${i}`);
      expect(field(record.trailers, "grpc-status")).toBe("0");
      expect(record.closed?.code).toBe(0);
    });
  });

  it("hears a failing call's status, in trailers or in a trailers-only response", async () => {
    const backend = await startEchoBackend("pod-a");
    cleanups.push(() => backend.close());
    const { session } = openSession(backend.port);
    const failed = send(
      session,
      post(backend.port, `/${ECHO_SERVICE_NAME}/Echo`, GRPC_FIELDS),
      framed("fail:5"),
    );
    const missing = send(
      session,
      post(backend.port, `/${ECHO_SERVICE_NAME}/EchoThree`, GRPC_FIELDS),
      framed("x"),
    );
    await Promise.all([failed.record.done, missing.record.done]);
    const status = (record: typeof failed.record) => field(record.trailers ?? record.fields, "grpc-status");
    expect(status(failed.record)).toBe("5");
    expect(status(missing.record)).toBe("12");
    expect(failed.record.closed?.code).toBe(0);
    expect(missing.record.closed?.code).toBe(0);
  });
});
