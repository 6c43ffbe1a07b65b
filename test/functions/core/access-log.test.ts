import { describe, expect, it } from "vitest";
import {
  type AccessLogEntry,
  accessLogLine,
  createAccessLog,
  MAX_LOGGED_PATH,
} from "../../../functions/core/observability/access-log.js";

const entry: AccessLogEntry = {
  time: Date.UTC(2030, 0, 2, 3, 4, 5, 678),
  requestId: "abc-123",
  client: "192.0.2.7",
  method: "GET",
  host: "web.localhost",
  path: "/x?q=1",
  status: 200,
  bytes: 29,
  durationMs: 1.23456,
  backend: "10.0.0.1:8080",
  cluster: "east",
  service: "demo/web",
  family: "ipv4",
  attempts: 1,
};

describe("accessLogLine", () => {
  it("writes one JSON object with every field in a fixed order", () => {
    expect(accessLogLine(entry)).toBe(
      '{"kind":"access","time":"2030-01-02T03:04:05.678Z","requestId":"abc-123","client":"192.0.2.7",' +
        '"method":"GET","host":"web.localhost","path":"/x?q=1","status":200,"bytes":29,"durationMs":1.235,' +
        '"backend":"10.0.0.1:8080","cluster":"east","service":"demo/web","family":"ipv4","attempts":1}',
    );
  });

  it("writes null for what is unknown and empty store labels for the router's own answer", () => {
    const line = JSON.parse(
      accessLogLine({
        ...entry,
        client: undefined,
        bytes: undefined,
        backend: undefined,
        cluster: "",
        service: "",
        family: "",
        attempts: 0,
        status: 404,
      }),
    );
    expect(line).toMatchObject({
      client: null,
      bytes: null,
      backend: null,
      cluster: "",
      service: "",
      attempts: 0,
    });
  });

  it("keeps request text on one line and cuts an over-long path", () => {
    const line = accessLogLine({ ...entry, path: `/a"b\n${"x".repeat(MAX_LOGGED_PATH)}`, host: "h\u2028" });
    expect(line).not.toContain("\n");
    expect((JSON.parse(line) as { path: string }).path).toHaveLength(MAX_LOGGED_PATH);
  });
});

describe("createAccessLog", () => {
  const lines: string[] = [];
  const write = (line: string) => lines.push(line);
  /** A random source that returns the given values in turn. */
  const sequence = (...values: number[]) => {
    let i = 0;
    return () => values[i++ % values.length] as number;
  };

  it.each([
    ["is off by default settings", { enabled: false, sample: 1 }],
    ["is off with a zero sample", { enabled: true, sample: 0 }],
  ])("%s", (_name, settings) => {
    expect(createAccessLog(settings, Math.random, write)).toBeUndefined();
  });

  it("logs every request at sample 1 without drawing a random number", () => {
    const log = createAccessLog(
      { enabled: true, sample: 1 },
      () => {
        throw new Error("no random number needed");
      },
      write,
    );
    expect([log?.sampled(), log?.sampled()]).toEqual([true, true]);
  });

  it("logs a request when the injected random number falls under the sample", () => {
    const log = createAccessLog({ enabled: true, sample: 0.25 }, sequence(0.1, 0.25, 0.9, 0.2499), write);
    expect([log?.sampled(), log?.sampled(), log?.sampled(), log?.sampled()]).toEqual([
      true,
      false,
      false,
      true,
    ]);
  });

  it("writes the line through the injected writer", () => {
    lines.length = 0;
    createAccessLog({ enabled: true, sample: 1 }, Math.random, write)?.write(entry);
    expect(lines).toEqual([accessLogLine(entry)]);
  });
});
