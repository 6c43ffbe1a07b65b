import { describeStatusRedirect } from "./support/status-redirects.js";

/** Conformance HTTPRoute307Redirect: a redirect with 307 Temporary Redirect to the same path. */
describeStatusRedirect("HTTPRoute307Redirect", {
  route: "redirect-path",
  path: "/temporary",
  statusCode: 307,
});
