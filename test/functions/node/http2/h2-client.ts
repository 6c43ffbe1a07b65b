import {
  type ClientHttp2Session,
  connect,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";

/** A node:http2 client session (h2c prior knowledge) to the router on 127.0.0.1; errors are the test's to read. */
export function h2Session(port: number): ClientHttp2Session {
  const session = connect(`http://127.0.0.1:${port}`);
  session.on("error", () => undefined);
  return session;
}

export interface H2Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request on `session`, its body (when given) sent whole; resolves with the whole answer. */
export function h2Request(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  body?: string | Buffer,
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let head: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      head = received;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () =>
      resolve({ status: Number(head[":status"]), headers: head, body: Buffer.concat(chunks).toString() }),
    );
    stream.on("error", reject);
    if (body !== undefined) stream.end(body);
  });
}
