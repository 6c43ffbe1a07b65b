import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Answer } from "../../e2e/support/host-client.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import { INFRA } from "./conformance-base.js";
import { type Conformance, startConformance } from "./conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./route-parents.js";

/** One request of an official test and what must answer it: `namespace/service` of a backend, or a status. */
export interface RoutingCase {
  readonly path: string;
  readonly host?: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly backend?: string;
  readonly status?: number;
  /** The request target the backend must have received (a URLRewrite's result). */
  readonly seenPath?: string;
  /** Headers the backend must have received (lower-case names); undefined values: absent. */
  readonly seen?: Record<string, string | undefined>;
  /** Response headers the client must get; undefined values: absent. */
  readonly answered?: Record<string, string | readonly string[] | undefined>;
}

/**
 * The suite's client decodes every answer typed exactly `application/json` as JSON and fails the request when
 * it cannot (conformance/utils/roundtripper), whatever the status: such an answer must carry JSON.
 */
export function expectReadableBySuiteClient(answer: Answer): void {
  if (answer.headers["content-type"] !== "application/json") return;
  expect(() => JSON.parse(answer.body), `an application/json answer of ${answer.status}`).not.toThrow();
}

/** Where the suite sends a request when it names no Host: the Gateway's address and first listener's port. */
export const GATEWAY_ADDRESS = "127.0.0.1:80";

/**
 * An official conformance test whose checks are: these routes are Accepted with resolved refs on their
 * parents, and these requests are answered so. One world per file (conformance-fixture.ts).
 */
export function describeRoutingConformance(
  name: string,
  options: {
    readonly objects: readonly ApplyInput[];
    readonly routes: readonly {
      readonly name: string;
      readonly namespace?: string;
      readonly parents?: number;
    }[];
    readonly cases: readonly RoutingCase[];
    /** More checks of the official test (status of other routes, listeners), given the running world. */
    readonly more?: (world: () => Conformance) => void;
  },
): void {
  let world: Conformance;
  beforeAll(async () => {
    world = await startConformance({ label: name.toLowerCase().slice(0, 20), objects: options.objects });
    // The sync publishes and the router reloads a moment after the objects are applied.
    const first = options.cases.find((item) => item.backend !== undefined || item.status !== 404);
    if (first) {
      await world.until(
        {
          host: first.host ?? GATEWAY_ADDRESS,
          path: first.path,
          ...(first.headers ? { headers: first.headers } : {}),
        },
        (answer) =>
          first.backend !== undefined ? answer.echo !== undefined : answer.status === first.status,
      );
    }
  }, 30_000);
  afterAll(() => world?.stop());

  describe(`conformance ${name}`, () => {
    it.each(options.routes)("accepts HTTPRoute $name with resolved refs", async (route) => {
      const count = route.parents ?? 1;
      const parents = await untilParents(world.cluster.kube, route.namespace ?? INFRA, route.name, (found) =>
        acceptedAndResolved(found, count),
      );
      expect(acceptedAndResolved(parents, count)).toBe(true);
    });

    it.each(options.cases)(
      "answers $path (Host $host, method $method): backend $backend, status $status",
      async (item) => {
        const answer = await world.send({
          host: item.host ?? GATEWAY_ADDRESS,
          path: item.path,
          ...(item.method ? { method: item.method } : {}),
          ...(item.headers ? { headers: item.headers } : {}),
        });
        expectReadableBySuiteClient(answer);
        if (item.backend !== undefined) {
          expect(answer.status).toBe(item.status ?? 200);
          expect(answer.echo?.backend).toBe(
            item.backend.includes("/") ? item.backend : `${INFRA}/${item.backend}`,
          );
        } else {
          expect(answer.status).toBe(item.status);
          expect(answer.echo).toBeUndefined();
        }
        if (item.seenPath !== undefined) expect(answer.echo?.path).toBe(item.seenPath);
        for (const [header, value] of Object.entries(item.seen ?? {})) {
          expect(answer.echo?.headers[header], `backend saw ${header}`).toBe(value);
        }
        for (const [header, value] of Object.entries(item.answered ?? {})) {
          expect(answer.headers[header], `answer ${header}`).toEqual(value);
        }
      },
    );

    options.more?.(() => world);
  });
}
