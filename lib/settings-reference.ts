import * as v from "valibot";

/**
 * The reference table of an environment schema (lib/env.ts): one row per variable, in the schema's order, with
 * its default and its meaning as the schema states them. Each entry carries its meaning as a `v.description`
 * (Markdown); its default is the schema's own (`v.optional`'s), unless a `v.metadata({ default })` says how an
 * operator should read it ("`LEASE_MS / 5`"). A variable without a description is an error: every setting an
 * operator can set is documented where it is read.
 *
 * @example settingsTable(RouterEnvSchema) // "| variable | default | meaning |\n| --- | --- | --- |\n| `PORT` | ..."
 */
export function settingsTable(schema: v.ObjectSchema<v.ObjectEntries, undefined>): string {
  const rows = Object.entries(schema.entries).map(([name, entry]) => {
    const meaning = v.getDescription(entry);
    if (meaning === undefined)
      throw new Error(`${name} has no v.description(): say what it means where it is read`);
    return `| \`${name}\` | ${cell(shownDefault(entry))} | ${cell(meaning)} |`;
  });
  return ["| variable | default | meaning |", "| --- | --- | --- |", ...rows].join("\n");
}

/** The default as the table shows it: the metadata's words, else the schema's value, "unset" or "(required)". */
function shownDefault(entry: v.GenericSchema): string {
  const metadata: { readonly default?: unknown } = v.getMetadata(
    entry as v.SchemaWithPipe<[v.GenericSchema]>,
  );
  const stated = metadata.default;
  if (typeof stated === "string") return stated;
  if (!isOptional(entry)) return "(required)";
  const value: unknown = v.getDefault(entry as v.OptionalSchema<v.GenericSchema, unknown>);
  return value === undefined || value === "" ? "unset" : `\`${String(value)}\``;
}

function isOptional(entry: v.GenericSchema): boolean {
  return entry.type === "optional" || entry.type === "exact_optional" || entry.type === "nullish";
}

/** One line of a Markdown table cell: `|` escaped, line breaks and runs of spaces made one space. */
function cell(text: string): string {
  return text.replace(/\s+/g, " ").trim().replace(/\|/g, "\\|");
}
