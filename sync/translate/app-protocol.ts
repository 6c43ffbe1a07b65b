import type { BackendProtocol } from "../../store/services.js";

/**
 * What a Service port's `appProtocol` asks of the router (Kubernetes "Application protocol": the
 * `kubernetes.io/` values are the standard ones; Gateway API GEP-1911, "Backend Protocol Selection"):
 * - `kubernetes.io/h2c`: HTTP/2 over cleartext with prior knowledge (RFC 9113 §3.3);
 * - `kubernetes.io/ws`: WebSocket over cleartext, which is HTTP/1.1 with upgrades;
 * - `kubernetes.io/wss`: WebSocket over TLS, which the router cannot speak (it opens no TLS to backends):
 *   unsupported, so a backendRef to such a port is reported UnsupportedProtocol instead of being sent
 *   cleartext to a port that expects TLS;
 * - absent, or any other value (`http`, `HTTP`, a vendor's `example.com/x`): HTTP/1.1, as GEP-1911 leaves
 *   values it does not define to the implementation and HTTP/1.1 is what the router always spoke.
 */
export type AppProtocolChoice =
  | { readonly supported: true; readonly protocol: BackendProtocol | undefined }
  | { readonly supported: false; readonly reason: string };

export function appProtocolChoice(appProtocol: string | null | undefined): AppProtocolChoice {
  switch (appProtocol) {
    case "kubernetes.io/h2c":
      return { supported: true, protocol: "h2c" };
    case "kubernetes.io/ws":
      return { supported: true, protocol: "ws" };
    case "kubernetes.io/wss":
      return {
        supported: false,
        reason: "WebSocket over TLS (kubernetes.io/wss) to backends is not supported",
      };
    default:
      return { supported: true, protocol: undefined };
  }
}
