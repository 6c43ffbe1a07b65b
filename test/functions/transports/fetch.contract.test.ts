import { Agent } from "undici";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { describeTransportContract } from "./transport.case.js";

describeTransportContract("fetch (transports/fetch.ts over Node's fetch)", () => {
  // A dispatcher of the test's own, so each case starts and ends with no connection kept from another.
  const dispatcher = new Agent();
  const fetchVia: typeof fetch = (input, init) =>
    fetch(input, { ...init, dispatcher } as unknown as RequestInit);
  const upstream = createFetchUpstream(fetchVia);
  return {
    send: (request) => upstream.send(request),
    differs: { host: "target authority", statusPast599: "handed on" },
    close: () => dispatcher.destroy(),
  };
});
