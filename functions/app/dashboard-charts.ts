import { CHART_COLORS } from "./dashboard-ui/colors.js";

/** The swatch colours of the legend, as classes: the page's CSP allows no style attribute. */
export const CHART_STYLE = CHART_COLORS.map((color, i) => `.swatch-${i} { color: ${color}; }`).join("\n");
