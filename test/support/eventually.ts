/**
 * Polls `condition` every 20 ms until it holds, or fails the test after `timeoutMs` naming `what` (computed
 * at the time of failure when given as a function, so it can show the last value seen). Tests wait for an
 * outcome this way, never for an exact time.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string | (() => string),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) {
      const described = typeof what === "string" ? what : what();
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${described}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
