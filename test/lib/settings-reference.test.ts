import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { booleanFromEnv, integerFromEnv, optionalText } from "../../lib/env.js";
import { settingsTable } from "../../lib/settings-reference.js";

const row = (entry: v.GenericSchema) => settingsTable(v.object({ SETTING: entry })).split("\n")[2];

describe("settingsTable", () => {
  it.each<[string, v.GenericSchema, string]>([
    [
      "an integer's default",
      v.pipe(integerFromEnv(8080, 0, 65535), v.description("port")),
      "| `SETTING` | `8080` | port |",
    ],
    ["a boolean's default", v.pipe(booleanFromEnv(true), v.description("on")), "| `SETTING` | `true` | on |"],
    [
      "an optional text as unset",
      v.pipe(optionalText, v.description("name")),
      "| `SETTING` | unset | name |",
    ],
    [
      "an empty default as unset",
      v.pipe(v.optional(v.string(), ""), v.description("list")),
      "| `SETTING` | unset | list |",
    ],
    ["a required setting", v.pipe(v.string(), v.description("name")), "| `SETTING` | (required) | name |"],
    [
      "the default the metadata states over the schema's",
      v.pipe(integerFromEnv(0, 0, 10), v.description("period"), v.metadata({ default: "`LEASE_MS / 5`" })),
      "| `SETTING` | `LEASE_MS / 5` | period |",
    ],
    [
      "a meaning on one line with its pipes escaped",
      v.pipe(optionalText, v.description('"ok"|"degraded",\n  or none')),
      '| `SETTING` | unset | "ok"\\|"degraded", or none |',
    ],
  ])("shows %s", (_what, entry, expected) => {
    expect(row(entry)).toBe(expected);
  });

  it("lists the variables in the schema's order under one header", () => {
    const table = settingsTable(
      v.object({
        B: v.pipe(optionalText, v.description("second letter")),
        A: v.pipe(optionalText, v.description("first letter")),
      }),
    );

    expect(table.split("\n")).toEqual([
      "| variable | default | meaning |",
      "| --- | --- | --- |",
      "| `B` | unset | second letter |",
      "| `A` | unset | first letter |",
    ]);
  });

  it("refuses a setting without a description, naming it", () => {
    expect(() => settingsTable(v.object({ NEW_SETTING: optionalText }))).toThrow(
      /NEW_SETTING has no v.description/,
    );
  });
});
