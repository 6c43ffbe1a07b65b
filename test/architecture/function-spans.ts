import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAst } from "rolldown/parseAst";

/**
 * How long each function of a TypeScript source is, read from a real parser's tree (rolldown's, oxc): a
 * function's span runs from its first line to its last, so a closure counts its whole body (the functions
 * inside it included) and each inner function counts again on its own; a class is not a function, each of its
 * methods counts one by one.
 */

export interface FunctionSpan {
  /** The path of the function, outermost first: `createReflector > run`, `ResponseParser > #parse`. */
  readonly name: string;
  readonly lines: number;
}

interface Node {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly [field: string]: unknown;
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);
const CLASS_TYPES = new Set(["ClassDeclaration", "ClassExpression"]);
const MEMBER_TYPES = new Set([
  "MethodDefinition",
  "Property",
  "PropertyDefinition",
  "TSAbstractMethodDefinition",
  "AccessorProperty",
]);

/** The name a key or identifier node reads as (`#x` for a private one), when it has a plain one. */
function keyName(key: unknown): string | undefined {
  if (!isNode(key)) return undefined;
  if (key.type === "Identifier") return key.name as string;
  if (key.type === "PrivateIdentifier") return `#${key.name as string}`;
  if (key.type === "Literal") return String(key.value);
  if (key.type === "MemberExpression") {
    const object = keyName(key.object);
    const property = keyName(key.property);
    return object && property ? `${object}.${property}` : property;
  }
  return undefined;
}

/** The name a child of `node` under `field` takes when it is an unnamed function or class. */
function nameForChild(node: Node, field: string): string | undefined {
  if (node.type === "VariableDeclarator" && field === "init") return keyName(node.id);
  if (MEMBER_TYPES.has(node.type) && field === "value") return keyName(node.key);
  if (node.type === "AssignmentExpression" && field === "right") return keyName(node.left);
  if (node.type === "CallExpression" && field === "arguments") return `${keyName(node.callee) ?? "call"}(…)`;
  if (node.type === "ExportDefaultDeclaration") return "default";
  return undefined;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  return starts;
}

/** The 1-based line of a UTF-16 offset (the parser's offsets are UTF-16 units, as JavaScript strings). */
function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] ?? 0) <= offset) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}

/** Every function of `source` with a body, in source order. */
export function functionSpans(source: string, fileName = "source.ts"): FunctionSpan[] {
  const starts = lineStarts(source);
  const spans: FunctionSpan[] = [];
  const visit = (value: unknown, outer: readonly string[], given: string | undefined): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, outer, given);
      return;
    }
    if (!isNode(value)) return;
    let path = outer;
    if (CLASS_TYPES.has(value.type)) path = [...outer, keyName(value.id) ?? given ?? "<class>"];
    if (FUNCTION_TYPES.has(value.type) && value.body) {
      path = [...outer, keyName(value.id) ?? given ?? "<function>"];
      const lines = lineOf(starts, value.end - 1) - lineOf(starts, value.start) + 1;
      spans.push({ name: path.join(" > "), lines });
    }
    for (const [field, child] of Object.entries(value)) {
      if (typeof child === "object" && child !== null) visit(child, path, nameForChild(value, field));
    }
  };
  visit(parseAst(source, { lang: "ts" }, fileName).body, [], undefined);
  return spans;
}

/** The production TypeScript files under `folders` (relative to `root`), declaration files left out. */
export function sourceFiles(root: string, folders: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) found.push(path);
    }
  };
  for (const folder of folders) walk(folder);
  return found.sort();
}

/** `file: name` for every function of those files longer than `maxLines`. */
export function functionsOver(root: string, files: readonly string[], maxLines: number): Map<string, number> {
  const over = new Map<string, number>();
  for (const file of files) {
    for (const span of functionSpans(readFileSync(join(root, file), "utf8"), file)) {
      if (span.lines > maxLines) over.set(`${file}: ${span.name}`, span.lines);
    }
  }
  return over;
}
