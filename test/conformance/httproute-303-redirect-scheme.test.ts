import { describeStatusRedirect } from "./support/status-redirects.js";

/** Conformance HTTPRoute303RedirectScheme: a scheme redirect to https with 303. */
describeStatusRedirect("HTTPRoute303RedirectScheme", {
  route: "redirect-scheme",
  path: "/scheme-and-temporary",
  statusCode: 303,
  scheme: "https",
});
