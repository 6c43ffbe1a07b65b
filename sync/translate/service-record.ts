import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { serviceId } from "../../store/names.js";
import { SERVICE_SCHEMA_VERSION, type ServiceRecordV2, ServiceRecordV2Schema } from "../../store/services.js";
import { appProtocolChoice } from "./app-protocol.js";
import { translateService } from "./backends.js";
import { type KubeEndpointSlice, type KubeService, namespaceOf } from "./kube-objects.js";
import { steeringOf } from "./steering-annotations.js";

const NO_TLS_PORTS: ReadonlyMap<number, string> = new Map();

/**
 * The service record (schema version 2) of one Service: the backends of each TCP port whose number some route
 * references (`ports`), sorted by number, each with the protocol its `appProtocol` asks for (app-protocol.ts), or
 * `https` with its BackendTLSPolicy where one is in force (`tlsPorts`), with its steering annotations (steering-annotations.ts); undefined
 * when none of them is a port of the Service (a Service no route references has no record). A port number the Service lists twice (TCP and UDP) is its TCP port.
 * Pure; an error when the record would not validate (what routers would refuse).
 */
export function serviceRecordOf(
  cluster: string,
  service: KubeService,
  slices: readonly KubeEndpointSlice[],
  ports: ReadonlySet<number>,
  /** Port number → the BackendTLSPolicy in force there (gateway/backend-tls-policies.ts): HTTP/1.1 over TLS. */
  tlsPorts: ReadonlyMap<number, string> = NO_TLS_PORTS,
): Result<ServiceRecordV2 | undefined> {
  if (ports.size === 0) return { ok: true, value: undefined };
  const referenced = (service.spec?.ports ?? []).some(
    (port) => ports.has(port.port) && (port.protocol ?? "TCP") === "TCP",
  );
  if (!referenced) return { ok: true, value: undefined };
  const byNumber = new Map<number, ServiceRecordV2["ports"][number]>();
  for (const translated of translateService(service, slices)) {
    const { name, number, protocol } = translated.port;
    if (protocol !== "TCP" || !ports.has(number) || byNumber.has(number)) continue;
    const spec = service.spec?.ports?.find(
      (port) => port.port === number && (port.protocol ?? "TCP") === "TCP",
    );
    const choice = appProtocolChoice(spec?.appProtocol);
    // An unsupported protocol (wss) is refused where a route references the port (gateway/backends.ts).
    const backendProtocol = choice.supported ? choice.protocol : undefined;
    const policy = tlsPorts.get(number);
    byNumber.set(number, {
      name,
      number,
      ...(policy !== undefined
        ? { protocol: "https" as const, tls: { policy } }
        : backendProtocol === undefined
          ? {}
          : { protocol: backendProtocol }),
      ipv4: translated.ipv4,
      ipv6: translated.ipv6,
    });
  }
  // A malformed steering annotation is reported by the publisher (steeringOf); the backends publish without it.
  const steering = steeringOf(service);
  const record: ServiceRecordV2 = {
    v: SERVICE_SCHEMA_VERSION,
    cluster,
    service: serviceId(namespaceOf(service), service.metadata.name),
    ports: [...byNumber.values()].sort((a, b) => a.number - b.number),
    ...(steering.ok && steering.value ? { steering: steering.value } : {}),
  };
  // Last guard: whatever passes here is what routers will accept when they decode it.
  const checked = v.safeParse(ServiceRecordV2Schema, record);
  if (checked.success) return { ok: true, value: record };
  const issue = checked.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  return {
    ok: false,
    error: `record does not validate: ${path ?? "(root)"}: ${issue?.message ?? "invalid"}`,
  };
}
