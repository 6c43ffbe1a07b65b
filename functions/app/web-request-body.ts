import { MAX_REPLAYABLE_BODY_BYTES } from "../core/forwarding/proxy-policy.js";

/** What the body tells its attempt about who holds the upload up. */
export interface BodyWatch {
  /** The transport asked for more and the client has not sent it yet. */
  waitingOnClient(): void;
  /** A chunk was handed over and the transport has not asked for the next yet. */
  waitingOnBackend(): void;
  /** The whole body was handed over. */
  sent(): void;
}

export interface RequestBody {
  /** The body to hand to one attempt. */
  forAttempt(watch: BodyWatch): ReadableStream<Uint8Array> | null;
  /** The whole body can still be sent again (nothing read yet, or everything read is still held). */
  canResend(): boolean;
}

export const NO_BODY: RequestBody = { forAttempt: () => null, canResend: () => true };

export function requestBody(request: {
  readonly method: string;
  readonly body: ReadableStream<Uint8Array> | null;
}): RequestBody {
  if (request.body === null || request.method === "GET" || request.method === "HEAD") return NO_BODY;
  return streamedBody(request.body);
}

/**
 * Streams the client's body to each attempt, never waiting for it to end. The first
 * MAX_REPLAYABLE_BODY_BYTES read are kept (as references to the chunks, no copy): a transport may read
 * ahead before it connects (Node's fetch does), so after a failed attempt the next one replays the kept
 * prefix and continues from the client's stream. Past that size the body can no longer be resent.
 */
function streamedBody(source: ReadableStream<Uint8Array>): RequestBody {
  const reader = source.getReader();
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let overflowed = false;
  let sourceDone = false;
  return {
    canResend: () => !overflowed,
    forAttempt: (watch) => {
      let replayed = 0;
      const close = (controller: ReadableStreamDefaultController<Uint8Array>) => {
        controller.close();
        watch.sent();
      };
      return new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            const replay = overflowed ? undefined : kept[replayed];
            if (replay) {
              replayed++;
              controller.enqueue(replay);
              watch.waitingOnBackend();
              return;
            }
            if (sourceDone) return close(controller);
            watch.waitingOnClient();
            const { done, value } = await reader.read();
            if (done) {
              sourceDone = true;
              return close(controller);
            }
            if (!overflowed) {
              keptBytes += value.byteLength;
              if (keptBytes <= MAX_REPLAYABLE_BODY_BYTES) {
                kept.push(value);
                replayed++;
              } else {
                overflowed = true;
                kept.length = 0;
              }
            }
            controller.enqueue(value);
            watch.waitingOnBackend();
          },
          cancel(reason) {
            // A failed attempt cancels its stream; the client's stream stays readable for the next one.
            if (overflowed) return reader.cancel(reason);
          },
        },
        // highWaterMark 0: nothing is read from the client before the transport asks for it.
        { highWaterMark: 0 },
      );
    },
  };
}
