import * as v from "valibot";
import { ConfigurationError } from "./configuration-error.js";

/**
 * valibot pieces for reading environment variables, shared by the router and the sync worker so both read
 * numbers, booleans and blanks the same way: an empty variable means "use the default".
 */
export const integerFromEnv = (fallback: number, min: number, max: number) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.transform((text) => (text.trim() === "" ? fallback : Number(text))),
    v.number(),
    v.integer(),
    v.minValue(min),
    v.maxValue(max),
  );

export const fractionFromEnv = (fallback: number) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.transform((text) => (text.trim() === "" ? fallback : Number(text))),
    v.number(),
    v.minValue(0),
    v.maxValue(1),
  );

export const booleanFromEnv = (fallback: boolean) =>
  v.pipe(
    v.optional(v.string(), fallback ? "true" : "false"),
    v.transform((text) => text.trim().toLowerCase()),
    v.picklist(["true", "false", "1", "0", "on", "off", "yes", "no", ""], "must be true or false"),
    v.transform((text) => (text === "" ? fallback : ["true", "1", "on", "yes"].includes(text))),
  );

/** Trimmed text, or undefined when unset or blank. */
export const optionalText = v.pipe(
  v.optional(v.string()),
  v.transform((text) => (text === undefined || text.trim() === "" ? undefined : text.trim())),
);

/**
 * Validates the schema's own variables (string values only; the rest of the environment is not looked at)
 * and throws one ConfigurationError that lists every bad variable, so an operator fixes them all in one go.
 */
export function parseEnv<TSchema extends v.ObjectSchema<v.ObjectEntries, undefined>>(
  schema: TSchema,
  env: Readonly<Record<string, unknown>>,
  what: string,
): v.InferOutput<TSchema> {
  const picked = Object.fromEntries(
    Object.keys(schema.entries).map((name) => [name, typeof env[name] === "string" ? env[name] : undefined]),
  );
  const result = v.safeParse(schema, picked, { abortPipeEarly: true });
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => `${v.getDotPath(issue) ?? "env"}: ${issue.message}`);
  throw new ConfigurationError(`invalid ${what} configuration: ${problems.join("; ")}`);
}
