/**
 * Today's annotation exposure as a route record of schema version 2. The conversion lives in the store
 * (store/legacy.ts) because routers derive the same route from every version 1 record a sync not upgraded yet
 * still writes: one function, so a Service is routed alike before and after its sync is upgraded.
 */
export { annotationRoute } from "../../store/legacy.js";
