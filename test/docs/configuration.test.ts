import { describe, expect, it } from "vitest";
import { CONFIGURATION_PAGE, withGeneratedTables } from "../../scripts/configuration-reference.js";
import { readPage } from "./support/pages.js";

describe("docs/configuration.md", () => {
  it("shows the settings tables the router's and the sync's schemas describe (npm run docs:config)", () => {
    const page = readPage(CONFIGURATION_PAGE);

    expect(page, "docs/configuration.md is behind the schemas: run npm run docs:config").toBe(
      withGeneratedTables(page),
    );
  });

  it("refuses a page that lost a table's markers rather than drop the table", () => {
    const page = readPage(CONFIGURATION_PAGE).replace("<!-- end of sync settings -->", "");

    expect(() => withGeneratedTables(page)).toThrow(/no markers for the sync settings/);
  });
});
