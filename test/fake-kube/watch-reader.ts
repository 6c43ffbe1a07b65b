/** Reads a watch response line by line with plain fetch, for protocol-level tests of the fake server. */
export interface WatchLine {
  readonly type: string;
  readonly object: { metadata?: { name?: string; resourceVersion?: string }; code?: number; reason?: string };
}

export interface WatchReader {
  readonly status: number;
  readonly headers: Headers;
  /** Collects lines until `until` matches one or the stream ends; throws after `timeoutMs`. */
  read(until: (line: WatchLine) => boolean, timeoutMs?: number): Promise<WatchLine[]>;
  close(): void;
}

export async function openWatch(url: string, token: string): Promise<WatchReader> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  const body = response.body;
  if (!body) throw new Error("watch response has no body");
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    status: response.status,
    headers: response.headers,
    async read(until, timeoutMs = 5_000) {
      const lines: WatchLine[] = [];
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          const line = JSON.parse(buffered.slice(0, newline)) as WatchLine;
          buffered = buffered.slice(newline + 1);
          lines.push(line);
          if (until(line)) return lines;
          newline = buffered.indexOf("\n");
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`no matching watch line within ${timeoutMs} ms`);
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), remaining);
        });
        const chunk = await Promise.race([reader.read(), timeout]);
        clearTimeout(timer);
        if (chunk === "timeout") throw new Error(`no matching watch line within ${timeoutMs} ms`);
        if (chunk.done) return lines;
        buffered += decoder.decode(chunk.value, { stream: true });
      }
    },
    close() {
      controller.abort();
      reader.cancel().catch(() => {});
    },
  };
}
