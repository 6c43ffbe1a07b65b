/** The charts' line colours, in order: the legend's swatches are classes of these (../dashboard-charts.ts). */
export const CHART_COLORS: readonly string[] = [
  "#1f77b4",
  "#d62728",
  "#2ca02c",
  "#9467bd",
  "#ff7f0e",
  "#17becf",
  "#8c564b",
  "#e377c2",
  "#7f7f7f",
];
