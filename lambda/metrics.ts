/**
 * The function's business metrics, written as CloudWatch Embedded Metric Format inside the request's own
 * log line: CloudWatch extracts them from the log, so they cost no call and no import at cold start.
 * One dimension, the function's name: one value per deployment, never a client or plant id (every
 * distinct dimension value is a billed metric); `Fault` alone has a second, the version.
 */
export const METRICS_NAMESPACE = "PlantStore";
export const METRICS_DIMENSION = "FunctionName";
/**
 * The second dimension of `Fault` alone: the version that answered (AWS_LAMBDA_FUNCTION_VERSION), so that a
 * rollout is judged by the new version's own faults (infra/alarms.ts). Only `Fault` carries it: a
 * dimension on every metric would add a billed metric per name for every version deployed.
 */
export const METRICS_VERSION_DIMENSION = "FunctionVersion";
/** A 500 the function answered: a bug of ours, counted per function and per version. */
export const FAULT_METRIC = "Fault";

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
  "UnknownSigningKeyHeld",
  FAULT_METRIC,
  "StoreAttempts",
  "ColdStart",
] as const;

export type MetricName = (typeof METRIC_NAMES)[number];

export type MetricCounts = Partial<Record<MetricName, number>>;

/** Which function and version wrote the metrics: the Lambda function's name and its published version. */
export interface MetricSource {
  functionName: string;
  functionVersion: string;
}

/**
 * The EMF fields to merge into a log line: the `_aws` directive naming the metrics, the dimension values
 * and each metric's value at the top level. Only the metrics this request moved are listed; a fault adds
 * a second directive that publishes `Fault` again under [FunctionName, FunctionVersion].
 */
export function embeddedMetrics(source: MetricSource, counts: MetricCounts, timestamp: number): object {
  const names = METRIC_NAMES.filter((name) => (counts[name] ?? 0) > 0);
  const directive = (dimensions: string[], metricNames: readonly MetricName[]) => ({
    Namespace: METRICS_NAMESPACE,
    Dimensions: [dimensions],
    Metrics: metricNames.map((name) => ({ Name: name, Unit: "Count" })),
  });
  const faulted = names.includes(FAULT_METRIC);
  return {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        directive([METRICS_DIMENSION], names),
        ...(faulted ? [directive([METRICS_DIMENSION, METRICS_VERSION_DIMENSION], [FAULT_METRIC])] : []),
      ],
    },
    [METRICS_DIMENSION]: source.functionName,
    ...(faulted ? { [METRICS_VERSION_DIMENSION]: source.functionVersion } : {}),
    ...Object.fromEntries(names.map((name) => [name, counts[name]])),
  };
}
