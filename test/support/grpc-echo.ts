import * as grpc from "@grpc/grpc-js";

/**
 * A loopback gRPC echo service for tests, defined without a .proto: messages are raw bytes (UTF-8 text here),
 * so the router's traffic is what the test wrote. Every answer names the backend that gave it, as the
 * Gateway API conformance suite's echo server reports its pod.
 */
const bytes = {
  requestSerialize: (value: Buffer) => value,
  requestDeserialize: (value: Buffer) => value,
  responseSerialize: (value: Buffer) => value,
  responseDeserialize: (value: Buffer) => value,
};

export const ECHO_SERVICE_NAME = "edgeslice.test.Echo";

function method(name: string, requestStream: boolean, responseStream: boolean) {
  return { path: `/${ECHO_SERVICE_NAME}/${name}`, requestStream, responseStream, ...bytes };
}

export const ECHO_SERVICE = {
  /**
   * Unary: `<backend> <text>`, trailer `x-backend: <backend>`. A text "fail:<code>" answers that status, and
   * "headers" the call's `x-header-*` metadata as JSON.
   */
  Echo: method("Echo", false, false),
  /** Another unary method, for matches that tell methods apart. */
  EchoTwo: method("EchoTwo", false, false),
  /** A method no backend implements (the server answers UNIMPLEMENTED). */
  EchoThree: method("EchoThree", false, false),
  /** Server streaming: `<count>` messages `<backend> <i>`; a count of 0 streams until cancelled. */
  Count: method("Count", false, true),
  /** Client streaming: the messages joined by `,`. */
  Join: method("Join", true, false),
  /** Bidi: each message echoed back as it comes. */
  Chat: method("Chat", true, true),
  /** Never answers: for deadlines and timeouts. */
  Hang: method("Hang", false, false),
} satisfies grpc.ServiceDefinition;

export const EchoClient = grpc.makeGenericClientConstructor(ECHO_SERVICE, "Echo");
export type EchoClientInstance = InstanceType<typeof EchoClient>;

/** What a backend saw: calls cancelled by their client (through the router), by method. */
export interface EchoBackend {
  readonly name: string;
  readonly port: number;
  readonly cancelled: string[];
  readonly calls: string[];
  close(): Promise<void>;
}

const text = (value: Buffer) => value.toString("utf8");

/** The request's `x-header-*` metadata as JSON, names sorted (a body of "headers" asks for it). */
function seenHeaders(metadata: grpc.Metadata): string {
  const map = metadata.getMap();
  const names = Object.keys(map)
    .filter((name) => name.startsWith("x-header-"))
    .sort();
  return JSON.stringify(
    Object.fromEntries(names.map((name) => [name, metadata.get(name).map(String).join(",")])),
  );
}

export async function startEchoBackend(name: string): Promise<EchoBackend> {
  const server = new grpc.Server();
  const cancelled: string[] = [];
  const calls: string[] = [];
  const watch = (call: { on(event: "cancelled", listener: () => void): unknown }, method: string) => {
    calls.push(method);
    call.on("cancelled", () => cancelled.push(method));
  };
  const implementation: grpc.UntypedServiceImplementation = {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      watch(call, "Echo");
      const body = text(call.request);
      if (body.startsWith("fail:")) {
        done({ code: Number(body.slice(5)), details: `failed as asked by ${name}` });
        return;
      }
      if (body === "headers") {
        done(null, Buffer.from(`${name} ${seenHeaders(call.metadata)}`));
        return;
      }
      const trailer = new grpc.Metadata();
      trailer.set("x-backend", name);
      done(null, Buffer.from(`${name} ${body}`), trailer);
    },
    EchoTwo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      watch(call, "EchoTwo");
      const body = text(call.request);
      done(null, Buffer.from(`${name} two ${body === "headers" ? seenHeaders(call.metadata) : body}`));
    },
    Count: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      watch(call, "Count");
      const count = Number(text(call.request));
      let sent = 0;
      const timer = setInterval(() => {
        if (call.cancelled) return clearInterval(timer);
        call.write(Buffer.from(`${name} ${sent++}`));
        if (count > 0 && sent === count) {
          clearInterval(timer);
          call.end();
        }
      }, 5);
      call.on("cancelled", () => clearInterval(timer));
    },
    Join: (call: grpc.ServerReadableStream<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      watch(call, "Join");
      const parts: string[] = [];
      call.on("data", (chunk: Buffer) => parts.push(text(chunk)));
      call.on("end", () => done(null, Buffer.from(`${name} ${parts.join(",")}`)));
    },
    Chat: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      watch(call, "Chat");
      call.on("data", (chunk: Buffer) => call.write(Buffer.from(`${name} ${text(chunk)}`)));
      call.on("end", () => call.end());
    },
    Hang: (call: grpc.ServerUnaryCall<Buffer, Buffer>) => {
      watch(call, "Hang");
    },
  };
  server.addService(
    Object.fromEntries(Object.entries(ECHO_SERVICE).filter(([key]) => key !== "EchoThree")),
    implementation,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    name,
    port,
    cancelled,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 1_000).unref();
      }),
  };
}

/** A grpc-js client of the echo service at 127.0.0.1:`port` (h2c prior knowledge), calling as `authority`. */
export function echoClient(port: number, authority = "app.example"): EchoClientInstance {
  return new EchoClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    "grpc.default_authority": authority,
  });
}

/** One unary call: the answer's text and trailers, or the status it failed with (told once the status came). */
export function unary(
  client: EchoClientInstance,
  name: "Echo" | "EchoTwo" | "EchoThree" | "Hang",
  body: string,
  options: grpc.CallOptions = {},
  headers: Record<string, string> = {},
): Promise<
  { ok: true; text: string; trailers: grpc.Metadata } | { ok: false; code: number; details: string }
> {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
  return new Promise((resolve) => {
    let answer: Buffer | undefined;
    const call = client.makeUnaryRequest<Buffer, Buffer>(
      ECHO_SERVICE[name].path,
      (value) => value,
      (value) => value,
      Buffer.from(body),
      metadata,
      options,
      (_error, value) => {
        answer = value;
      },
    );
    call.on("status", (status: grpc.StatusObject) => {
      if (status.code === grpc.status.OK) {
        resolve({ ok: true, text: answer ? text(answer) : "", trailers: status.metadata });
      } else resolve({ ok: false, code: status.code, details: status.details });
    });
  });
}
