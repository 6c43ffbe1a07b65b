import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type DemoBackend, startDemoBackend } from "../../../scripts/demo-backend.js";

/** The backends examples/ lists, by the fixed port each slice names (as `npm start` serves them). */
const EXAMPLE_BACKENDS = [
  { fixedPort: 18081, ip: "127.0.0.1", service: "demo/web" },
  { fixedPort: 18082, ip: "::1", service: "demo/web" },
  { fixedPort: 18083, ip: "::1", service: "demo/api" },
  { fixedPort: 18084, ip: "::1", service: "demo/api" },
  { fixedPort: 18085, ip: "127.0.0.1", service: "demo/shop-stable" },
  { fixedPort: 18086, ip: "127.0.0.1", service: "demo/shop-canary" },
  { fixedPort: 18087, ip: "127.0.0.1", service: "demo/docs" },
] as const;

export interface ExampleBackends {
  /** The loopback address a fixed examples/ port was served on, e.g. `[::1]:40123` for 18083. */
  address(fixedPort: number): string;
  close(): Promise<void>;
}

/**
 * Demo backends (scripts/demo-backend.ts) on free loopback ports, and examples/ copied into `dir` with each
 * fixed port swapped for the one its backend got: no fight with a running `npm start` or a parallel test.
 */
export async function serveExamplesIn(dir: string): Promise<ExampleBackends> {
  const started = new Map<number, DemoBackend>();
  const close = async () => {
    for (const backend of started.values()) await backend.close();
  };
  try {
    for (const target of EXAMPLE_BACKENDS) {
      started.set(
        target.fixedPort,
        await startDemoBackend({ service: target.service, ip: target.ip, port: 0 }),
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  const examples = new URL("../../../examples/", import.meta.url).pathname;
  for (const file of await readdir(examples)) {
    const text = await readFile(join(examples, file), "utf8");
    const remapped = text.replace(/\bport: (\d+)/g, (whole, digits: string) => {
      const address = started.get(Number(digits))?.address;
      return address === undefined ? whole : `port: ${address.slice(address.lastIndexOf(":") + 1)}`;
    });
    await writeFile(join(dir, file), remapped);
  }
  return {
    address(fixedPort) {
      const address = started.get(fixedPort)?.address;
      if (address === undefined) throw new Error(`examples/ has no backend on ${fixedPort}`);
      return address;
    },
    close,
  };
}
