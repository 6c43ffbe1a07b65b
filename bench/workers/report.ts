import { fixed, formatTable } from "../support/table.js";
import type { WireCounts } from "./counting-proxy.js";
import {
  type OperationFigures,
  WORKERS_OPERATIONS,
  type WorkersOperation,
  type WorkersSizeResult,
} from "./workers-bench.js";

/** The wording of each operation, without the figures: `workers refresh (one change, 1000 services)`. */
export function operationLabel(operation: WorkersOperation, services: number): string {
  switch (operation) {
    case "refresh-unchanged":
      return `workers refresh (nothing changed, ${services} services)`;
    case "refresh-one-change":
      return `workers refresh (one change, ${services} services)`;
    case "cold-request":
      return `workers cold request (${services} services)`;
  }
}

function wireText(wire: WireCounts): string {
  return `${wire.roundTrips} round trips, ${wire.bytes} bytes`;
}

/** One line of exactly the shape, e.g. `workers cold request (100 services): 5 round trips, 1234 bytes`. */
export function figureLine(operation: WorkersOperation, services: number, wire: WireCounts): string {
  return `${operationLabel(operation, services)}: ${wireText(wire)}`;
}

export function formatWorkersReport(results: readonly WorkersSizeResult[]): string {
  const names = results[0]?.readers.map((reader) => reader.reader) ?? [];
  const out: string[] = [
    "## Workers: store reads per refresh and per cold request",
    "",
    "One cluster, 20 endpoints per Service, through a counting TCP proxy. Round trips are request→response",
    "turns on the wire, the connection's set-up turns and QUIT included (each load opens its own connection:",
    "a socket cannot outlive a request in workerd); bytes are both directions.",
    "",
  ];
  const sideBySide = results.flatMap((result) =>
    WORKERS_OPERATIONS.map((operation) => [
      operationLabel(operation, result.services),
      ...result.readers.map((reader) => {
        const figures = reader.operations?.[operation];
        return figures ? wireText(figures.wire) : "n/a";
      }),
    ]),
  );
  out.push(formatTable(["", ...names], sideBySide), "");

  for (const name of names) {
    out.push(`${name}:`);
    for (const result of results) {
      const reader = result.readers.find((candidate) => candidate.reader === name);
      for (const operation of WORKERS_OPERATIONS) {
        const figures = reader?.operations?.[operation];
        out.push(
          figures
            ? figureLine(operation, result.services, figures.wire)
            : `${operationLabel(operation, result.services)}: n/a`,
        );
      }
      const cpu = reader?.operations;
      if (cpu) {
        out.push(
          `  isolate CPU (median): refresh, nothing changed ${fixed(cpu["refresh-unchanged"].cpuMicros / 1000)} ms;` +
            ` refresh, one change ${fixed(cpu["refresh-one-change"].cpuMicros / 1000)} ms;` +
            ` cold request ${fixed(cpu["cold-request"].cpuMicros / 1000)} ms`,
        );
      }
      if (reader?.afterCold) {
        out.push(
          `  after the cold response (waitUntil, the rest of the store): ${wireText(reader.afterCold)}`,
        );
      }
    }
    out.push("");
  }

  const breakdown = results.flatMap((result) =>
    result.readers.flatMap(({ reader, operations }) =>
      operations
        ? WORKERS_OPERATIONS.map((operation) => [
            reader,
            String(result.services),
            operation,
            ...breakdownCells(operations[operation]),
          ])
        : [],
    ),
  );
  out.push(
    "Where the round trips and bytes go, and isolate CPU (process CPU, user + system, median of the runs,",
    "on a direct connection: the proxy is not in it; a refresh includes routing one request afterwards):",
    "",
    formatTable(
      [
        "reader",
        "services",
        "operation",
        "conns",
        "set-up turns",
        "set-up B",
        "query turns",
        "query B",
        "QUIT turns",
        "to Redis B",
        "from Redis B",
        "CPU ms",
        "wall ms",
      ],
      breakdown,
    ),
    "",
    "Decoding every record once (JSON.parse + schema check), as each whole-store reload does:",
    "",
    formatTable(
      ["services", "endpoints", "record bytes", "decode ms (median)"],
      results.map((result) => [
        String(result.services),
        String(result.endpoints),
        String(result.recordBytes),
        fixed(result.decodeMs),
      ]),
    ),
  );
  return out.join("\n");
}

function breakdownCells(figures: OperationFigures): string[] {
  const { wire } = figures;
  return [
    String(wire.connections),
    String(wire.byKind.handshake.roundTrips),
    String(wire.byKind.handshake.bytes),
    String(wire.byKind.query.roundTrips),
    String(wire.byKind.query.bytes),
    String(wire.byKind.close.roundTrips),
    String(wire.bytesToServer),
    String(wire.bytesToClient),
    fixed(figures.cpuMicros / 1000),
    fixed(figures.wallMs),
  ];
}
