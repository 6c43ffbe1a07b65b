/** The outcome of parsing or decoding untrusted input: the value, or why it was refused. */
export type Result<T, E = string> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: E };
