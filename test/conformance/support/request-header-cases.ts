import { httpRouteObject } from "./conformance-base.js";
import { type ModifierSpec, modifiedRule } from "./header-modifiers.js";
import type { RoutingCase } from "./routing-cases.js";

/**
 * The route and requests the official HTTPRouteRequestHeaderModifier and HTTPRouteBackendRequestHeaderModifier
 * share: set replaces, add appends (the echo backend reads repeated fields as one list joined by ", "), remove
 * deletes; names compared case-insensitively. The two differ only in where each rule's filter sits: on the rule
 * or on its backendRef.
 */
export function requestModifierRoute(where: "rule" | "backendRef") {
  const modified = (path: string, modifier: ModifierSpec) =>
    modifiedRule("RequestHeaderModifier", path, modifier, where);
  return httpRouteObject("request-header-modifier", {
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
  });
}

const v1 = "infra-backend-v1";

export const REQUEST_MODIFIER_CASES: readonly RoutingCase[] = [
  {
    path: "/set",
    headers: { "Some-Other-Header": "val" },
    backend: v1,
    seen: { "some-other-header": "val", "x-header-set": "set-overwrites-values" },
  },
  {
    path: "/set",
    headers: { "Some-Other-Header": "val", "X-Header-Set": "some-other-value" },
    backend: v1,
    seen: { "some-other-header": "val", "x-header-set": "set-overwrites-values" },
  },
  {
    path: "/add",
    headers: { "Some-Other-Header": "val" },
    backend: v1,
    seen: { "some-other-header": "val", "x-header-add": "add-appends-values" },
  },
  {
    path: "/add",
    headers: { "Some-Other-Header": "val", "X-Header-Add": "some-other-value" },
    backend: v1,
    seen: { "x-header-add": "some-other-value, add-appends-values" },
  },
  {
    path: "/remove",
    headers: { "X-Header-Remove": "val" },
    backend: v1,
    seen: { "x-header-remove": undefined },
  },
  {
    path: "/multiple",
    headers: {
      "X-Header-Set-2": "set-val-2",
      "X-Header-Add-2": "add-val-2",
      "X-Header-Remove-2": "remove-val-2",
      "Another-Header": "another-header-val",
    },
    backend: v1,
    seen: {
      "x-header-set-1": "header-set-1",
      "x-header-set-2": "header-set-2",
      "x-header-add-1": "header-add-1",
      "x-header-add-2": "add-val-2, header-add-2",
      "x-header-add-3": "header-add-3",
      "another-header": "another-header-val",
      "x-header-remove-1": undefined,
      "x-header-remove-2": undefined,
    },
  },
  {
    path: "/case-insensitivity",
    headers: {
      "x-header-set": "original-val-set",
      "x-header-add": "original-val-add",
      "x-header-remove": "original-val-remove",
      "Another-Header": "another-header-val",
    },
    backend: v1,
    seen: {
      "x-header-set": "header-set",
      "x-header-add": "original-val-add, header-add",
      "another-header": "another-header-val",
      "x-header-remove": undefined,
    },
  },
];
