import { describeStatusRedirect } from "./support/status-redirects.js";

/** Conformance HTTPRoute308Redirect: a redirect with 308 Permanent Redirect to the same path. */
describeStatusRedirect("HTTPRoute308Redirect", {
  route: "308-redirect",
  path: "/permanent",
  statusCode: 308,
});
