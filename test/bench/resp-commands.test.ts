import { describe, expect, it } from "vitest";
import { createCommandReader } from "../../bench/workers/resp-commands.js";

const encode = (...args: string[]) =>
  `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join("")}`;

describe("createCommandReader", () => {
  it("names every command of a chunk that holds several, upper-cased", () => {
    const reader = createCommandReader();
    expect(reader.push(Buffer.from(encode("hgetall", "k") + encode("EXISTS", "a") + encode("ping")))).toEqual(
      ["HGETALL", "EXISTS", "PING"],
    );
  });

  it("names a command split across chunks once, when its last byte arrives", () => {
    const reader = createCommandReader();
    const bytes = Buffer.from(encode("SET", "key", "a value with\r\nCRLF inside"));
    const names: string[] = [];
    for (let offset = 0; offset < bytes.length; offset += 3) {
      names.push(...reader.push(bytes.subarray(offset, offset + 3)));
    }
    expect(names).toEqual(["SET"]);
  });

  it("names an inline command by its first word", () => {
    const reader = createCommandReader();
    expect(reader.push(Buffer.from("ping\r\nquit\r\n"))).toEqual(["PING", "QUIT"]);
  });
});
