import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = new URL("../../../", import.meta.url).pathname;

/** Every page an operator reads: README.md, deploy/README.md and docs/*.md, as paths from the repository root. */
export function documentationPages(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => `docs/${file}`);
  return ["README.md", "deploy/README.md", ...docs.sort()];
}

export function readPage(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** The text of the `## <title>` section of a page, up to the next `## `. */
export function section(path: string, title: string): string {
  const text = readPage(path);
  const start = text.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`${path} has no section "${title}"`);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The first cells of the table rows of a text that start with a code span. */
export function firstCells(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => line.split("|")[1] ?? "");
}

/** The lines of a Markdown text outside fenced code blocks. */
export function proseLines(text: string): string[] {
  let fenced = false;
  return text.split("\n").filter((line) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/**
 * The anchors of a page's headings as GitHub renders them: lower-cased, everything but letters, digits, spaces,
 * `-` and `_` dropped, spaces turned into `-`, and a repeated anchor numbered `-1`, `-2`...
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The targets of a text's inline Markdown links, `[text](target)`, outside code. */
export function linkTargets(text: string): string[] {
  return (
    proseLines(text)
      .join("\n")
      .replace(/`[^`]*`/g, "")
      .match(/\]\(([^)\s]+)\)/g)
      ?.map((link) => link.slice(2, -1)) ?? []
  );
}
