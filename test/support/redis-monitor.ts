import { connect, type Socket } from "node:net";

/** Commands a Redis server executed, in its own order, as MONITOR reports them. */
export interface RedisMonitor {
  /** Each executed command's arguments, the command name lower-cased. */
  readonly commands: readonly (readonly string[])[];
  close(): void;
}

/**
 * MONITOR over a raw RESP2 socket. ioredis' monitor mode failed now and then here with "Command queue state
 * error" on a monitor line, and a test that reasons about command order cannot lose one.
 */
export async function startRedisMonitor(url: string): Promise<RedisMonitor> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect({ host: hostname.replace(/^\[|\]$/g, ""), port: Number(port) });
  socket.setEncoding("utf8");
  const commands: string[][] = [];
  let buffered = "";
  let acknowledged: () => void = () => {};
  const started = new Promise<void>((resolve, reject) => {
    acknowledged = resolve;
    socket.once("error", reject);
  });
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf("\r\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 2);
      newline = buffered.indexOf("\r\n");
      if (line === "+OK") acknowledged();
      else if (line.startsWith("+")) commands.push(monitorArguments(line));
    }
  });
  socket.write("MONITOR\r\n");
  await started;
  return {
    commands,
    close: () => socket.destroy(),
  };
}

/** `+1700000000.123456 [0 127.0.0.1:5000] "hset" "key" "field"` → ["hset", "key", "field"]. */
function monitorArguments(line: string): string[] {
  const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) =>
    (match[1] ?? "").replace(/\\(.)/g, "$1"),
  );
  if (args[0] !== undefined) args[0] = args[0].toLowerCase();
  return args;
}
