import { CHART_STYLE } from "./dashboard-charts.js";
import { DASHBOARD_SCRIPT } from "./dashboard-script.js";

/**
 * `/_edgeslice/ui`: one self-contained page, no external asset. The page itself holds no datum (so it may be
 * public); its script asks for the admin token and reads `/_edgeslice/dashboard` with it. The
 * Content-Security-Policy allows exactly the inline script and style by their SHA-256 (CSP Level 3
 * §8.3, "hash-source"), fetches to this origin only, and no framing, forms, plugins or base changes.
 */
const STYLE = `
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2430; background: #f5f6f8; }
body { margin: 0; }
header { display: flex; align-items: baseline; gap: 1rem; padding: 0.8rem 1.5rem; background: #1d2430; color: #fff; }
header h1 { font-size: 1.15rem; margin: 0; letter-spacing: 0.02em; }
#status { flex: 1; font-size: 0.85rem; color: #c9d1dc; }
#status.bad { color: #ffb4a8; }
header button { font: inherit; font-size: 0.8rem; background: transparent; color: #c9d1dc; border: 1px solid #56606e; border-radius: 4px; padding: 0.2rem 0.6rem; cursor: pointer; }
main { padding: 0.5rem 1.5rem 1.5rem; max-width: 72rem; }
section { margin-top: 1.2rem; }
h2 { font-size: 0.95rem; text-transform: uppercase; letter-spacing: 0.06em; color: #56606e; margin: 0 0 0.4rem; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid #dde1e7; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.4rem 0.7rem; border-bottom: 1px solid #eceef2; vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; font-size: 0.8rem; color: #3a4350; }
.muted { color: #8a93a0; }
.bad { color: #b3261e; font-weight: 600; }
.badge { display: inline-block; font-size: 0.72rem; font-weight: 600; padding: 0.05rem 0.45rem; border-radius: 999px; margin-left: 0.3rem; }
.fresh { background: #dcf3e3; color: #17643a; margin-left: 0; }
.stale { background: #fde4cf; color: #8a4300; }
.use { background: #dfe9fb; color: #1f4e9c; }
#notes { font-size: 0.8rem; color: #8a93a0; margin-top: 1.2rem; }
form { max-width: 28rem; margin: 3rem auto; background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 1.2rem 1.5rem; }
form h2 { margin-bottom: 0.8rem; }
form p { font-size: 0.9rem; color: #3a4350; }
form input { font: inherit; width: 100%; box-sizing: border-box; padding: 0.45rem; margin: 0.3rem 0 0.8rem; border: 1px solid #b8c0cc; border-radius: 4px; }
form button { font: inherit; padding: 0.4rem 1.1rem; background: #1f4e9c; color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
.drain { background: #e8e2f6; color: #4b3a86; }
h3 { font-size: 0.85rem; margin: 0.6rem 0 0.2rem; color: #3a4350; }
.charts { display: flex; flex-wrap: wrap; gap: 0.6rem; }
.chart { margin: 0; background: #fff; border: 1px solid #dde1e7; border-radius: 4px; padding: 0.3rem 0.4rem; }
.chart figcaption { font-size: 0.78rem; font-weight: 600; color: #3a4350; }
.chart svg { display: block; }
.chart .empty { font-size: 0.75rem; margin: 0; }
.legend { font-size: 0.8rem; margin: 0.2rem 0 0.4rem; }
.legend .key { margin-right: 0.9rem; white-space: nowrap; }
.host { font-weight: 600; }
.rule { font-size: 0.8rem; color: #3a4350; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.pod { display: inline-block; font-size: 0.72rem; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; padding: 0.05rem 0.35rem; margin: 0 0.25rem 0.2rem 0; border-radius: 3px; }
.pod-ready { background: #dcf3e3; color: #17643a; }
.pod-fallback { background: #fff3c4; color: #6b5400; }
.pod-draining { background: #e8e2f6; color: #4b3a86; }
.pod-ejected { background: #fbd9d5; color: #8c1d13; text-decoration: line-through; }
#history-note { font-size: 0.8rem; color: #8a93a0; margin: 0 0 0.3rem; }
${CHART_STYLE}
`;

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>edgeslice router</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<header><h1>edgeslice router</h1><span id="status">loading</span><button id="signout" type="button" hidden>Forget token</button></header>
<form id="login" hidden>
<h2>Admin token</h2>
<p>Every figure here needs the router's <code>ADMIN_TOKEN</code>. It stays in this tab (session storage) and is sent as a Bearer token.</p>
<label for="token">Token</label>
<input id="token" type="password" autocomplete="off" spellcheck="false" required>
<button type="submit">Show dashboard</button>
<p id="login-message" class="bad"></p>
</form>
<main id="app" hidden>
<section><h2>Traffic</h2><p id="history-note"></p>
<h3>By service</h3><div id="by-service"></div>
<h3>By cluster</h3><div id="by-cluster"></div>
<h3>Retries</h3><div id="retries"></div></section>
<section><h2>Clusters</h2><table>
<thead><tr><th>Cluster</th><th>State</th><th>Services</th><th>Heartbeat age</th><th>Apiserver</th></tr></thead>
<tbody id="clusters"></tbody></table></section>
<section><h2>Routes</h2><table>
<thead><tr><th>Host and rules (match \u2192 backends by weight)</th><th>Cluster</th><th>Service</th><th>IPv4 endpoints</th><th>IPv6 endpoints</th><th>Pods</th></tr></thead>
<tbody id="routes"></tbody></table></section>
<section><h2>Pods out of rotation</h2><table>
<thead><tr><th>Cluster</th><th>Service</th><th>Pod</th><th>State</th></tr></thead>
<tbody id="pods"></tbody></table></section>
<section><h2>Requests</h2><table>
<thead><tr><th>Service</th><th>Requests/s</th><th>Error ratio (5xx)</th><th>By cluster</th></tr></thead>
<tbody id="services"></tbody></table></section>
<section><h2>Cluster steering</h2><table>
<thead><tr><th>Service</th><th>Policy</th><th>Share per cluster</th><th>Why</th></tr></thead>
<tbody id="steering"></tbody></table></section>
<section><h2>Refused: cluster grants and budgets</h2><table>
<thead><tr><th>Cluster</th><th>Kind</th><th>What</th></tr></thead>
<tbody id="refused"></tbody></table></section>
<p id="notes"></p>
</main>
<script>${DASHBOARD_SCRIPT}</script>
</body>
</html>
`;

let headers: Promise<Record<string, string>> | undefined;

/** The page's response headers; the CSP hashes are computed once with Web Crypto (Node and Workers). */
export function dashboardHeaders(): Promise<Record<string, string>> {
  headers ??= (async () => {
    const [script, style] = await Promise.all([sha256(DASHBOARD_SCRIPT), sha256(STYLE)]);
    return {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": [
        "default-src 'none'",
        `script-src 'sha256-${script}'`,
        `style-src 'sha256-${style}'`,
        "connect-src 'self'",
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join("; "),
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
    };
  })();
  return headers;
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  let binary = "";
  for (const byte of new Uint8Array(digest)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
