import { ECHO_SET_HEADER } from "../e2e/support/echo-backends.js";
import { httpRouteObject } from "./support/conformance-base.js";
import { type ModifierSpec, modifiedRule } from "./support/header-modifiers.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteResponseHeaderModifier: set replaces the backend's field, add appends to it, remove
 * deletes it; names compared case-insensitively. The echo backend answers with the fields it is asked for.
 */
const modified = (path: string, modifier: ModifierSpec) =>
  modifiedRule("ResponseHeaderModifier", path, modifier);
const v1 = "infra-backend-v1";
const backendSets = (fields: string) => ({ [ECHO_SET_HEADER]: fields });

describeRoutingConformance("HTTPRouteResponseHeaderModifier", {
  objects: [
    httpRouteObject("response-header-modifier", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        modified("/set", { set: [["X-Header-Set", "set-overwrites-values"]] }),
        modified("/add", { add: [["X-Header-Add", "add-appends-values"]] }),
        modified("/remove", { remove: ["X-Header-Remove"] }),
        modified("/multiple", {
          set: [
            ["X-Header-Set-1", "header-set-1"],
            ["X-Header-Set-2", "header-set-2"],
          ],
          add: [
            ["X-Header-Add-1", "header-add-1"],
            ["X-Header-Add-2", "header-add-2"],
            ["X-Header-Add-3", "header-add-3"],
          ],
          remove: ["X-Header-Remove-1", "X-Header-Remove-2"],
        }),
        modified("/case-insensitivity", {
          set: [["X-Header-Set", "header-set"]],
          add: [["X-Header-Add", "header-add"]],
          remove: ["X-Header-Remove"],
        }),
      ],
    }),
  ],
  routes: [{ name: "response-header-modifier" }],
  cases: [
    { path: "/set", backend: v1, answered: { "x-header-set": "set-overwrites-values" } },
    {
      path: "/set",
      headers: backendSets("X-Header-Set:some-other-value"),
      backend: v1,
      answered: { "x-header-set": "set-overwrites-values" },
    },
    { path: "/add", backend: v1, answered: { "x-header-add": "add-appends-values" } },
    {
      path: "/add",
      headers: backendSets("X-Header-Add:some-other-value"),
      backend: v1,
      answered: { "x-header-add": ["some-other-value", "add-appends-values"] },
    },
    {
      path: "/remove",
      headers: backendSets("X-Header-Remove:val"),
      backend: v1,
      answered: { "x-header-remove": undefined },
    },
    {
      path: "/multiple",
      headers: backendSets(
        "X-Header-Set-2:set-val-2,X-Header-Add-2:add-val-2,X-Header-Remove-2:remove-val-2",
      ),
      backend: v1,
      answered: {
        "x-header-set-1": "header-set-1",
        "x-header-set-2": "header-set-2",
        "x-header-add-1": "header-add-1",
        "x-header-add-2": ["add-val-2", "header-add-2"],
        "x-header-add-3": "header-add-3",
        "x-header-remove-1": undefined,
        "x-header-remove-2": undefined,
      },
    },
    {
      path: "/case-insensitivity",
      headers: backendSets(
        "x-header-set:original-val-set,x-header-add:original-val-add,x-header-remove:original-val-remove",
      ),
      backend: v1,
      answered: {
        "x-header-set": "header-set",
        "x-header-add": ["original-val-add", "header-add"],
        "x-header-remove": undefined,
      },
    },
  ],
});
