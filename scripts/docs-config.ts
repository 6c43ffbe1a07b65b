import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIGURATION_PAGE, withGeneratedTables } from "./configuration-reference.js";

/**
 * `npm run docs:config`: rewrites the settings tables of docs/configuration.md from the settings' valibot
 * schemas (their v.description and defaults). test/docs/configuration.test.ts fails while the page is behind.
 */
const page = join(dirname(fileURLToPath(import.meta.url)), "..", CONFIGURATION_PAGE);
const before = readFileSync(page, "utf8");
const after = withGeneratedTables(before);
if (after !== before) writeFileSync(page, after);
process.stdout.write(`${CONFIGURATION_PAGE}: ${after === before ? "up to date" : "written"}\n`);
