import type { ResponseHead } from "./response-head.js";

/** What the parser tells its connection. */
export interface ResponseSink {
  /** A final response head (interim 1xx ones are skipped). */
  onResponseHead(head: ResponseHead): void;
  /** A piece of the body; false asks the parser to pause until resume(). */
  onResponseData(chunk: Buffer): boolean;
  /** The response ended; `reusable` when the connection may carry another request. */
  onResponseEnd(reusable: boolean): void;
  /** The server switched protocols for an upgrade it asked for: `rest` is what followed the head (a copy). */
  onResponseUpgrade?(head: ResponseHead, rest: Buffer): void;
}
