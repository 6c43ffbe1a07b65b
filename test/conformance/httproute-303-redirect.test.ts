import { describeStatusRedirect } from "./support/status-redirects.js";

/** Conformance HTTPRoute303Redirect: a POST redirected with 303 See Other to the same path. */
describeStatusRedirect("HTTPRoute303Redirect", {
  route: "303-redirect",
  path: "/see-other",
  statusCode: 303,
  method: "POST",
});
