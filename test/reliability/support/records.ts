import { SCHEMA_VERSION, type ServiceRecord } from "../../../store/records.js";

/** A valid ServiceRecord routing `host` to the given IPv4 backends. */
export function serviceRecord(options: {
  cluster: string;
  service: string;
  host: string;
  backends: readonly { ip: string; port: number }[];
}): ServiceRecord {
  return {
    v: SCHEMA_VERSION,
    cluster: options.cluster,
    service: options.service,
    hosts: [options.host],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: {
      endpoints: options.backends.map((b) => ({ ip: b.ip, port: b.port })),
      fallback: false,
      draining: [],
    },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  };
}
