import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { RouterEnvSchema } from "../../functions/core/settings/router-env.js";
import { integerFromEnv, parseEnv } from "../../lib/env.js";
import { SyncEnvSchema } from "../../sync/sync-env.js";

type EnvSchema = v.ObjectSchema<v.ObjectEntries, undefined>;

/** Values an operator mistypes: a word, a negative, a fraction, a huge number, separators of other settings. */
const MISTAKES = ["abc", "-5", "1.5", "99999999999", "a=b c;d", "x:y,z"];
/** valibot's own wording, which says what the code expected rather than what the operator should write. */
const VALIBOT_WORDING = /Invalid (type|length|value|format)|Expected|received/;

/** Every refusal `schema` can give for one variable set to one mistake (others valid or unset). */
function refusals(schema: EnvSchema, what: string, base: Record<string, string>) {
  return Object.keys(schema.entries).flatMap((variable) =>
    MISTAKES.flatMap((mistake) => {
      try {
        parseEnv(schema, { ...base, [variable]: mistake }, what);
        return [];
      } catch (error) {
        return [{ variable, mistake, message: (error as Error).message }];
      }
    }),
  );
}

describe("a refused setting", () => {
  it.each([
    ["router", RouterEnvSchema, {}],
    ["sync", SyncEnvSchema, { CLUSTER_NAME: "east" }],
  ] as const)(
    "of the %s names its variable once and says what it must be, in edgeslice's words",
    (what, schema, base) => {
      const all = refusals(schema, what, base);

      expect(all.length).toBeGreaterThan(20);
      for (const { variable, mistake, message } of all) {
        const named = message.split(new RegExp(`\\b${variable}\\b`)).length - 1;
        expect({ variable, mistake, named }).toEqual({ variable, mistake, named: 1 });
        expect(message, `${variable}=${mistake}`).not.toMatch(VALIBOT_WORDING);
      }
    },
  );

  it.each([
    ["abc", 'PORT must be a whole number from 0 to 65535, not "abc"'],
    ["1.5", 'PORT must be a whole number from 0 to 65535, not "1.5"'],
    ["70000", "PORT must be a whole number from 0 to 65535, not 70000"],
  ])("PORT=%s is refused as %s", (value, expected) => {
    const schema = v.object({ PORT: integerFromEnv(8080, 0, 65535) });

    expect(() => parseEnv(schema, { PORT: value }, "router")).toThrow(
      `invalid router configuration: ${expected}`,
    );
  });
});
