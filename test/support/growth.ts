/**
 * How the time of `work(size)` grows when its input grows `factor` times: about `factor` for linear work,
 * `factor²` for quadratic. Each size is timed a few times, interleaved, and the fastest run of each is
 * kept: a busy machine can slow single runs, but hardly every run of one size and none of the other.
 */
export function growthRatio(work: (size: number) => void, size: number, factor = 4, runs = 7): number {
  const largeSize = size * factor;
  work(size); // compiled before it is timed
  let fastestSmall = Number.POSITIVE_INFINITY;
  let fastestLarge = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    fastestSmall = Math.min(
      fastestSmall,
      timed(() => work(size)),
    );
    fastestLarge = Math.min(
      fastestLarge,
      timed(() => work(largeSize)),
    );
  }
  return fastestLarge / fastestSmall;
}

function timed(work: () => void): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}
