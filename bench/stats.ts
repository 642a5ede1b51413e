export interface Summary {
  count: number;
  /** The fastest tenth: on a loaded machine, the runs least disturbed by other work. */
  p10: number;
  median: number;
  p90: number;
  p99: number;
}

/** The nearest-rank percentile: a value that was actually observed. */
export function percentile(values: readonly number[], rank: number): number {
  if (values.length === 0) throw new Error("no values to summarize");
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    count: values.length,
    p10: percentile(values, 10),
    median: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
  };
}
