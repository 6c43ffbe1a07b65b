import * as v from "valibot";
import { ConfigurationError } from "./configuration-error.js";

/**
 * valibot pieces for reading environment variables, shared by the router and the sync worker so both read
 * numbers, booleans and blanks the same way: an empty variable means "use the default".
 */
export const integerFromEnv = (fallback: number, min: number, max: number) => {
  const range = `must be a whole number from ${min} to ${max}`;
  const notThat = (issue: { readonly input: unknown }) => `${range}, not ${JSON.stringify(issue.input)}`;
  return v.pipe(
    v.optional(v.string(), String(fallback)),
    v.check((text) => text.trim() === "" || /^[+-]?\d+$/.test(text.trim()), notThat),
    v.transform((text) => (text.trim() === "" ? fallback : Number(text))),
    v.number(range),
    v.integer(range),
    v.minValue(min, notThat),
    v.maxValue(max, notThat),
  );
};

export const fractionFromEnv = (fallback: number) => {
  const range = "must be a number from 0 to 1";
  const notThat = (issue: { readonly input: unknown }) => `${range}, not ${JSON.stringify(issue.input)}`;
  return v.pipe(
    v.optional(v.string(), String(fallback)),
    v.check((text) => text.trim() === "" || /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text.trim()), notThat),
    v.transform((text) => (text.trim() === "" ? fallback : Number(text))),
    v.number(range),
    v.minValue(0, notThat),
    v.maxValue(1, notThat),
  );
};

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
  const problems = result.issues.map((issue) => named(v.getDotPath(issue) ?? "env", issue.message));
  throw new ConfigurationError(`invalid ${what} configuration: ${problems.join("; ")}`);
}

/** A problem as the error lists it: `PORT must be...`, and the variable named once even when its message names it. */
function named(variable: string, message: string): string {
  if (message.startsWith(variable)) return message;
  return message.startsWith("must ") ? `${variable} ${message}` : `${variable}: ${message}`;
}
