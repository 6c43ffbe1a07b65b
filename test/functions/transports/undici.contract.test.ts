import { createUndiciUpstream } from "../../../functions/transports/undici.js";
import { describeTransportContract } from "./transport.case.js";

describeTransportContract("undici (transports/undici.ts)", () => {
  const upstream = createUndiciUpstream();
  return {
    send: (request) => upstream.send(request),
    differs: { host: "as sent", statusPast599: "refused" },
    close: () => upstream.destroy(),
  };
});
