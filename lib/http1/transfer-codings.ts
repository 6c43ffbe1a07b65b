/**
 * A Transfer-Encoding list (RFC 9112 §6.1), every field's value joined: the codings in the order they were
 * applied. Only SP and HTAB count as the whitespace around an element (a byte such as NBSP makes another
 * coding, as it does for Node's parser). An empty element makes the list unreadable: RFC 9110 §5.6.1 would
 * skip it, but Node's parser takes `chunked,` for another coding than chunked, and the framing of a message is
 * never read here otherwise than a Node client reads it.
 */
export interface TransferCodings {
  /** The last coding is chunked: the message is framed by it (RFC 9112 §6.3). */
  readonly chunked: boolean;
  /** The codings other than that final chunked, joined by ", "; undefined when there are none. */
  readonly others: string | undefined;
}

/** The codings of `list`; undefined when it names none or has an empty element. */
export function transferCodingsOf(list: string): TransferCodings | undefined {
  const codings: string[] = [];
  for (const element of list.split(",")) {
    const coding = withoutOws(element);
    if (coding === "") return undefined;
    codings.push(coding);
  }
  const chunked = (codings[codings.length - 1] as string).toLowerCase() === "chunked";
  if (chunked) codings.pop();
  return { chunked, others: codings.length === 0 ? undefined : codings.join(", ") };
}

/** `text` without the optional whitespace around it (SP and HTAB only, RFC 9110 §5.6.3). */
export function withoutOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
