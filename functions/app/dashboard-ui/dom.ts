/** The page's building blocks: every datum goes in as text (textContent), never as HTML. */

export function byId<Element extends HTMLElement = HTMLElement>(id: string): Element {
  return document.getElementById(id) as Element;
}

export function el<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  text?: string | number | null,
  className?: string,
): HTMLElementTagNameMap[Tag] {
  const element = document.createElement(tag);
  if (text !== undefined && text !== null) element.textContent = String(text);
  if (className) element.className = className;
  return element;
}

export type Cell = Node | string;

export function row(cells: readonly Cell[]): HTMLTableRowElement {
  const tr = el("tr");
  for (const cell of cells) {
    const td = el("td");
    if (cell instanceof Node) td.appendChild(cell);
    else td.textContent = cell;
    tr.appendChild(td);
  }
  return tr;
}

/** The table body `id` holds `rows`, or one muted row saying `empty`. */
export function fill(id: string, rows: readonly HTMLTableRowElement[], empty: string): void {
  const body = byId(id);
  body.replaceChildren();
  if (rows.length === 0) {
    const td = el("td", empty, "muted");
    td.colSpan = 6;
    const tr = el("tr");
    tr.appendChild(td);
    body.appendChild(tr);
  }
  for (const item of rows) body.appendChild(item);
}

export function badge(text: string, kind: string): HTMLSpanElement {
  return el("span", text, `badge ${kind}`);
}

export function age(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return "unknown";
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export function group(nodes: readonly Node[]): HTMLSpanElement {
  const span = el("span");
  for (const node of nodes) span.appendChild(node);
  return span;
}
