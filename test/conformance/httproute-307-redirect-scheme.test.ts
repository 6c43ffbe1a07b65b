import { describeStatusRedirect } from "./support/status-redirects.js";

/** Conformance HTTPRoute307RedirectScheme: a scheme redirect to https with 307. */
describeStatusRedirect("HTTPRoute307RedirectScheme", {
  route: "redirect-scheme",
  path: "/scheme-and-temporary",
  statusCode: 307,
  scheme: "https",
});
