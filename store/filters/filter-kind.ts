import * as v from "valibot";
import type { Result } from "../../lib/result.js";

/**
 * One kind of Gateway API filter (HTTPRouteFilter.type) as edgeslice carries it: the field of a rule's record
 * filters it is stored in and that field's schema, and its translation from the API object. The modules of
 * this folder each hold one kind whole (its record schema, its translation, and the form the router applies);
 * kinds.ts lists them.
 */

/** An HTTPRouteFilter or GRPCRouteFilter as the API server sends it: its type and that type's field. */
export interface GatewayFilter {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** Why a rule's filters drop the rule (the route's PartiallyInvalid or Accepted=False reason). */
export interface FilterProblem {
  readonly reason: "UnsupportedValue" | "IncompatibleFilters";
  readonly message: string;
}

/** The rule around the filters, for the checks that look past one filter. */
export interface RuleFacts {
  /** The rule's path matches, as stored. */
  readonly paths: readonly { readonly type: string }[];
  readonly hasBackends: boolean;
}

/** A backendRef a filter names (RequestMirror): resolved by the sync against its Services and ReferenceGrants. */
export interface GatewayBackendRef {
  readonly group?: string | null | undefined;
  readonly kind?: string | null | undefined;
  readonly name: string;
  readonly namespace?: string | null | undefined;
  readonly port?: number | null | undefined;
}

/** What a translation needs of the sync. */
export interface FilterContext {
  /** The Service port a backendRef names, or undefined (the sync has reported why). */
  resolveBackendRef(ref: GatewayBackendRef): { readonly service: string; readonly port: number } | undefined;
}

export interface FilterKind<
  Field extends string,
  Schema extends v.GenericSchema,
  OnBackendRef extends boolean = boolean,
> {
  /** HTTPRouteFilter.type. */
  readonly type: string;
  /** The field of the record's filters (RouteFilters) it is stored in. */
  readonly field: Field;
  /** That field's schema: a router decodes it strictly, so one that predates the kind skips the record. */
  readonly schema: Schema;
  /**
   * "in-order": each filter translated where it stands in the rule, the first of a type kept (a header
   * modifier, a redirect, a rewrite); "whole-rule": every filter of the type at once, after the others and
   * their compatibility (the mirrors, each resolved; CORS, at most one).
   */
  readonly translated: "in-order" | "whole-rule";
  /** Whether HTTPBackendRef.filters may hold it (its record field is then in BackendFilters too). */
  readonly onBackendRef: OnBackendRef;
  /** The field's value for the rule's filters of this type (in their order); undefined: none of them. */
  translate(
    filters: readonly GatewayFilter[],
    context: FilterContext,
  ): Result<v.InferOutput<Schema> | undefined, string>;
  /** What the kind refuses beside the rule's other filters (as translated) and matches. */
  check?(filters: Readonly<Record<string, unknown>>, rule: RuleFacts): FilterProblem | undefined;
}

export type AnyFilterKind = FilterKind<string, v.GenericSchema>;

export const unsupported = (message: string): FilterProblem => ({ reason: "UnsupportedValue", message });

/**
 * An "in-order" kind's translation: the first filter of its type is kept, but every one must be valid (the
 * field `inputField` read by `schema`, then `translateOne`); the first error ends the rule's translation.
 */
export function firstOfType<Schema extends v.GenericSchema, Value>(
  filters: readonly GatewayFilter[],
  type: string,
  inputField: string,
  schema: Schema,
  translateOne: (given: v.InferOutput<Schema>) => Result<Value>,
): Result<Value | undefined> {
  let first: Value | undefined;
  for (const filter of filters) {
    const given = filter[inputField];
    if (!given || !v.is(schema, given)) return { ok: false, error: `filter ${type} is not supported` };
    const translated = translateOne(given);
    if (!translated.ok) return translated;
    first ??= translated.value;
  }
  return { ok: true, value: first };
}
