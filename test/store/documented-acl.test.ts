import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { routerAclRules, syncAclRules } from "../../store/acl.js";

/** The ACL lines an operator copies from the docs, rebuilt from the rules the ACL test proves. */
function documentedLines(): string[] {
  const [syncOn, ...sync] = syncAclRules("edgeslice", "east");
  const [routerOn, ...router] = routerAclRules("edgeslice");
  return [
    `ACL SETUSER edgeslice-sync-east ${syncOn} >PASSWORD ${sync.join(" ")}`,
    `ACL SETUSER edgeslice-router ${routerOn} >PASSWORD ${router.join(" ")}`,
  ];
}

describe("documented ACL lines", () => {
  it.each(["docs/redis.md"])("%s shows exactly the rules store/acl.ts generates", async (file) => {
    const text = await readFile(new URL(`../../${file}`, import.meta.url), "utf8");
    for (const line of documentedLines()) expect(text).toContain(line);
  });
});
