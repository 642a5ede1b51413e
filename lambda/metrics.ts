/**
 * The function's business metrics, written as CloudWatch Embedded Metric Format inside the request's own
 * log line: CloudWatch extracts them from the log, so they cost no call and no import at cold start.
 * One dimension, the function's name: one value per deployment, never a client or plant id (every
 * distinct dimension value is a billed metric).
 */
export const METRICS_NAMESPACE = "PlantStore";
export const METRICS_DIMENSION = "FunctionName";

/** Counts per request; each is 0 or 1 except StoreAttempts. */
export const METRIC_NAMES = [
  "Created",
  "Replayed",
  "Conflict",
  "RefusedAuth",
  "RefusedBody",
  "RefusedSize",
  "RefusedMediaType",
  "StoreUnavailable",
  "IssuerUnavailable",
  "StoreAttempts",
  "ColdStart",
] as const;

export type MetricName = (typeof METRIC_NAMES)[number];
