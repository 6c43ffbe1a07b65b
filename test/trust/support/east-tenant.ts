import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import type { HostileWorld } from "./hostile-world.js";

/** Every named cluster beats with a lease of ten minutes: none goes stale while a test runs. */
export async function beatAll(world: HostileWorld, clusters: readonly string[]): Promise<void> {
  for (const cluster of clusters) {
    await (await world.writer(cluster)).heartbeat({
      holder: `${cluster}-0`,
      leaseMs: 600_000,
      at: Date.now(),
    });
  }
}

/** The tenant every attack is watched against: east's pay/web on `pod`, routed for pay.test. */
export async function publishEastPay(world: HostileWorld, pod: { ip: string; port: number }): Promise<void> {
  const east = await world.writer("east");
  await east.putService(
    serviceRecordV2({
      cluster: "east",
      service: "pay/web",
      ports: [{ number: 80, ipv4: [endpoint(pod.ip, pod.port)] }],
    }),
  );
  await east.putRoute(
    routeRecord("httproute:pay/web", {
      hostnames: ["pay.test"],
      rules: [routeRule([{ service: "pay/web", port: 80, weight: 1 }])],
    }),
  );
}
