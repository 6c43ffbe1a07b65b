import { describeStatusRedirect } from "./support/status-redirects.js";

/** Conformance HTTPRoute308RedirectScheme: a scheme redirect to https with 308. */
describeStatusRedirect("HTTPRoute308RedirectScheme", {
  route: "redirect-scheme",
  path: "/scheme-and-temporary",
  statusCode: 308,
  scheme: "https",
});
