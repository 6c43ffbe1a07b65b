import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../support/redis.js";

/**
 * The dashboard in a real headless browser (Debian's chromium driven by playwright-core) against the
 * all-in-one demo (`scripts/start.ts`, as test/e2e/start-script.test.ts runs it): the token is entered once,
 * the charts fill from the router's samples, rules, pods and clusters show up, and screenshots are kept in
 * test-artifacts/dashboard-*.png (their paths are printed).
 */
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const ARTIFACTS = "test-artifacts";
const SCREENSHOTS = {
  login: join(ARTIFACTS, "dashboard-login.png"),
  dashboard: join(ARTIFACTS, "dashboard-full.png"),
  charts: join(ARTIFACTS, "dashboard-charts.png"),
};
const TOKEN = "dashboard-test-token";
const HAS_CHROMIUM = existsSync(CHROMIUM);

if (!HAS_CHROMIUM) console.warn(`dashboard e2e skipped: no ${CHROMIUM} (apt-get install -y chromium)`);

const cleanups: (() => Promise<unknown> | undefined)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** examples/ with its fixed demo ports (18081-18087) swapped for free ones, as start-script.test.ts does. */
async function examplesOnFreePorts(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "edgeslice-dashboard-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const mapping = new Map<number, number>();
  for (const fixed of [18081, 18082, 18083, 18084, 18085, 18086, 18087]) mapping.set(fixed, await freePort());
  for (const file of await readdir("examples")) {
    const text = await readFile(join("examples", file), "utf8");
    const remapped = text.replace(/\bport: (\d+)/g, (whole, digits: string) => {
      const free = mapping.get(Number(digits));
      return free === undefined ? whole : `port: ${free}`;
    });
    await writeFile(join(dir, file), remapped);
  }
  return dir;
}

/** The all-in-one on a free loopback port; resolves once its banner is out. */
async function startDemo(port: number, adminPort: number): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    ADMIN_TOKEN: TOKEN,
    EXAMPLES_DIR: await examplesOnFreePorts(),
  };
  delete env.REDIS_URL;
  // `timeout` bounds the child's life even if this test process dies before cleaning up.
  const child = spawn("timeout", ["120", process.execPath, "--import", "tsx", "scripts/start.ts"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGTERM");
    return undefined;
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString("utf8");
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 30 s:\n${output}`)), 30_000);
    const check = () => {
      if (!output.includes("Ctrl-C stops everything")) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout?.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`start script exited (${code}):\n${output}`));
    });
  });
  return child;
}

/** A GET with an explicit Host header (fetch forbids setting Host). */
function get(port: number, host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host }, timeout: 10_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end();
  });
}

async function browser(): Promise<BrowserContext> {
  const profile = await mkdtemp(join(tmpdir(), "edgeslice-chromium-"));
  cleanups.push(() => rm(profile, { recursive: true, force: true }));
  // playwright passes the profile as --user-data-dir; a fresh one per run.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 720 },
  });
  cleanups.push(() => context.close());
  return context;
}

/** Sends requests to the demo until `stop` is called: traffic for the charts, every host of the demo once a round. */
function keepSending(port: number): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const host of ["web.localhost", "api.localhost", "shop.localhost", "nothing.localhost"]) {
        await get(port, host, "/").catch(() => 0);
      }
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

describe.skipIf(!HAS_CHROMIUM)("the dashboard page in headless chromium", () => {
  it("asks for the token once, then charts traffic and shows rules, clusters and pods", async () => {
    const port = await freePort();
    const adminPort = await freePort();
    await startDemo(port, adminPort);
    const stopSending = keepSending(port);
    cleanups.push(() => stopSending());

    const context = await browser();
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));

    await page.goto(`http://127.0.0.1:${adminPort}/_edgeslice/ui`);
    await page.locator("#login").waitFor({ state: "visible" });
    expect(await page.locator("#app").isVisible()).toBe(false);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOTS.login });
    await page.fill("#token", TOKEN);
    await page.click("#login button[type=submit]");

    const routes = page.locator("#routes");
    await routes.getByText("api.localhost").waitFor({ timeout: 10_000 });
    const rows = (await routes.locator("tr").allInnerTexts()).map((row) =>
      row.split("\t").map((c) => c.trim()),
    );
    const web = rows.find((row) => row[0]?.startsWith("web.localhost")) ?? [];
    const api = rows.find((row) => row[0]?.startsWith("api.localhost")) ?? [];
    const shop = rows.find((row) => row[0]?.startsWith("shop.localhost")) ?? [];
    // web is dual-stack and PreferIPv4 sends it over IPv4; api is IPv6-only with a terminating pod.
    expect(web.slice(1, 5)).toEqual(["local", "demo/web:80", "1 ready in use", "1 ready"]);
    expect(web[5]).toMatch(/^127\.0\.0\.1:\d+\s+\[::1\]:\d+$/);
    expect(api.slice(1, 5)).toEqual(["local", "demo/api:80", "none", "1 ready · 1 draining in use"]);
    // The HTTPRoute's rules: the header match to the canary, the 90/10 split, with their weights.
    expect(shop[0]?.split("\n")).toEqual([
      "shop.localhost",
      "/ [x-canary: always] \u2192 demo/shop-canary:80",
      "/ \u2192 demo/shop-stable:80 90%, demo/shop-canary:80 10%",
    ]);
    // The draining pod is listed apart, as out of rotation.
    const pods = (await page.locator("#pods tr").allInnerTexts()).map((row) =>
      row.split("\t").map((c) => c.trim()),
    );
    expect(pods).toEqual([["local", "demo/api:80", expect.stringMatching(/^\[::1\]:\d+$/), "draining"]]);

    const clusters = await page.locator("#clusters tr").allInnerTexts();
    const [cluster] = clusters.map((row) => row.split("\t").map((cell) => cell.trim()));
    // Five Services: web and api (annotations), shop-stable and shop-canary (HTTPRoute), docs (Ingress).
    expect(cluster).toEqual(["local", "fresh", "5", expect.stringMatching(/^\d+\.\d s$/), "reachable"]);

    // The router samples its counters every 5 s: once two samples hold traffic, every chart has its lines.
    for (const chart of [
      "#by-service-rate",
      "#by-service-errors",
      "#by-service-latency",
      "#by-cluster-rate",
    ]) {
      await page.locator(`${chart} path`).first().waitFor({ state: "attached", timeout: 20_000 });
    }
    // Lines, not dots: a third sample gives each series two points.
    await expect
      .poll(
        async () => (await page.locator("#by-service-rate path").first().getAttribute("d"))?.includes("L"),
        {
          timeout: 20_000,
        },
      )
      .toBe(true);
    const legend = await page.locator("#by-service .legend").textContent();
    for (const name of ["demo/web", "demo/api", "(no route)"]) expect(legend).toContain(name);
    expect(await page.locator("#by-cluster .legend").textContent()).toContain("(router)");
    // nothing.localhost is a 404 of every request the router answers itself: a 4xx ratio of 100 %.
    expect(await page.locator("#by-service-errors svg text").allTextContents()).toContain("100%");
    await expect.poll(() => page.locator("#status").textContent()).toMatch(/snapshot v\d+.*memory store/);
    await page.screenshot({ path: SCREENSHOTS.dashboard, fullPage: true });
    await page.locator("#by-service").screenshot({ path: SCREENSHOTS.charts });
    console.log(`dashboard screenshots: ${Object.values(SCREENSHOTS).join(", ")}`);

    // Entered once: a reload in the same tab goes straight to the data.
    await page.reload();
    await routes.getByText("web.localhost").waitFor({ timeout: 10_000 });
    expect(await page.locator("#login").isVisible()).toBe(false);
    // A wrong token is forgotten and asked for again.
    // A string: this file is type-checked without the DOM library.
    await page.evaluate('sessionStorage.setItem("edgeslice.adminToken", "wrong")');
    await page.reload();
    await page.locator("#login-message").getByText("not accepted").waitFor({ timeout: 10_000 });

    // The 401 above is the only request the page made that failed; no CSP violation, no script error.
    expect(problems.filter((text) => !text.includes("401"))).toEqual([]);
  }, 90_000);
});
