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
  "UnknownSigningKey",
  "StoreAttempts",
  "ColdStart",
] as const;

export type MetricName = (typeof METRIC_NAMES)[number];

export type MetricCounts = Partial<Record<MetricName, number>>;

/**
 * The EMF fields to merge into a log line: the `_aws` directive naming the metrics, the dimension value
 * and each metric's value at the top level. Only the metrics this request moved are listed.
 */
export function embeddedMetrics(functionName: string, counts: MetricCounts, timestamp: number): object {
  const names = METRIC_NAMES.filter((name) => (counts[name] ?? 0) > 0);
  return {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [[METRICS_DIMENSION]],
          Metrics: names.map((name) => ({ Name: name, Unit: "Count" })),
        },
      ],
    },
    [METRICS_DIMENSION]: functionName,
    ...Object.fromEntries(names.map((name) => [name, counts[name]])),
  };
}
