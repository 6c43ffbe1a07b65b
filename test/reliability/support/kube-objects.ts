import { sliceObject } from "../../fake-kube/fixtures.js";
import type { ApplyInput } from "../../fake-kube/store.js";

/** A slice of `service` whose ready endpoints are `backends` (they share one port, as in a real slice). */
export function readySlice(
  namespace: string,
  service: string,
  backends: readonly { ip: string; port: number }[],
  sliceName = `${service}-abc12`,
): ApplyInput {
  const addresses = backends.map((backend) => backend.ip);
  return sliceObject(namespace, sliceName, service, addresses, { port: backends[0]?.port ?? 8080 });
}
