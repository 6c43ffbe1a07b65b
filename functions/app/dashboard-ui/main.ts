import type { DashboardView } from "../dashboard-data.js";
import { renderHistory } from "./charts.js";
import { age, byId } from "./dom.js";
import { RefreshRates } from "./rates.js";
import { renderClusters, renderPods, renderRefused, renderRoutes } from "./tables.js";

/**
 * The dashboard page's only script (bundled into ../dashboard-script.ts, inlined and allowed by its hash:
 * ../dashboard-page.ts). The admin token is asked for once per tab, kept in sessionStorage and sent as a
 * Bearer token; a 401 forgets it and asks again. Every datum is written with textContent, never as HTML.
 */

const KEY = "edgeslice.adminToken";
const PERIOD_MS = 2000;

class Dashboard {
  #timer = 0;
  readonly #rates = new RefreshRates();

  start(): void {
    byId("login").addEventListener("submit", (event) => {
      event.preventDefault();
      const input = byId<HTMLInputElement>("token");
      const value = input.value.trim();
      if (!value) return;
      sessionStorage.setItem(KEY, value);
      input.value = "";
      this.refresh();
    });
    byId("signout").addEventListener("click", () => {
      sessionStorage.removeItem(KEY);
      this.showLogin("");
    });
    this.refresh();
  }

  showLogin(message: string): void {
    clearTimeout(this.#timer);
    this.#rates.forgetRequests();
    byId("app").hidden = true;
    byId("signout").hidden = true;
    byId("login").hidden = false;
    setStatus("admin token needed", false);
    byId("login-message").textContent = message || "";
    byId("token").focus();
  }

  refresh(): void {
    const token = sessionStorage.getItem(KEY);
    if (!token) {
      this.showLogin("");
      return;
    }
    fetch("dashboard", { headers: { authorization: `Bearer ${token}` }, cache: "no-store" })
      .then((response) => this.#answered(response))
      .catch((error: Error) => {
        setStatus(`router unreachable: ${error.message}`, true);
        this.#schedule();
      });
  }

  async #answered(response: Response): Promise<void> {
    if (response.status === 401) {
      sessionStorage.removeItem(KEY);
      this.showLogin("That token was not accepted.");
      return;
    }
    if (!response.ok) {
      showApp();
      setStatus(`the router answered HTTP ${response.status}`, true);
      this.#schedule();
      return;
    }
    const data = (await response.json()) as DashboardView;
    showApp();
    this.#render(data, performance.now());
    this.#schedule();
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.refresh(), PERIOD_MS);
  }

  #render(data: DashboardView, now: number): void {
    const store =
      data.store === undefined || data.store === null
        ? "memory store"
        : data.store.connected
          ? "store connected"
          : "store unreachable: serving last known";
    const snapshot =
      data.version === null ? "no snapshot" : `snapshot v${data.version}, ${age(data.ageSeconds)} old`;
    setStatus(
      `${snapshot} \u00b7 ${store} \u00b7 refreshed ${new Date().toLocaleTimeString()}`,
      data.store ? !data.store.connected : data.version === null,
    );
    renderClusters(data.clusters);
    renderHistory(data.history);
    renderRoutes(data.routes);
    renderPods(data.routes);
    this.#rates.renderServices(data.services, now);
    renderRefused(data.refused || []);
    this.#rates.renderSteering(data.steering);
    byId("notes").textContent = data.notes.join("; ");
  }
}

function showApp(): void {
  byId("login").hidden = true;
  byId("signout").hidden = false;
  byId("app").hidden = false;
}

function setStatus(text: string, bad: boolean): void {
  const status = byId("status");
  status.textContent = text;
  status.className = bad ? "bad" : "";
}

new Dashboard().start();
