/** A plain-text table with right-aligned numeric columns, for terminal output and pasting into notes. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => {
        const width = widths[column] ?? cell.length;
        return column === 0 ? cell.padEnd(width) : cell.padStart(width);
      })
      .join("  ");
  const rule = widths.map((width) => "-".repeat(width)).join("  ");
  return [line(headers), rule, ...rows.map(line)].join("\n");
}

export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

export function ratio(numerator: number, denominator: number): string {
  return denominator > 0 ? `${(numerator / denominator).toFixed(2)}x` : "n/a";
}

/** "PASS"/"MISS" against a target, so the reader does not have to compare numbers by eye. */
export function verdict(met: boolean): string {
  return met ? "meets target" : "MISSES target";
}
