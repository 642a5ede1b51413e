/**
 * Lambda's CPU share, imitated with a cgroup v1 CPU quota: a function gets CPU in proportion to its
 * memory, one vCPU at 1,769 MB (bench/cost.ts), so 256 MB gets ~14.5% of a core. A process whose pid is
 * written to a group's `cgroup.procs` may then run `quota` µs in every 10,000 µs period.
 *
 * Making a group needs root and a cgroup v1 `cpu` hierarchy; where it cannot be made, the bench says
 * "not measured" for that size rather than measuring at full core. Every group made is removed at the
 * end, on failure too, and on exit as a last resort.
 */
import { mkdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpuFraction } from "./cost.ts";

const CPU_HIERARCHY = "/sys/fs/cgroup/cpu";
const PERIOD_MICROS = 10_000;
/** The kernel refuses a quota under 1 ms: a smaller share takes a longer period (128 MB: 1,447 µs in 20 ms). */
const MIN_QUOTA_MICROS = 1_000;

const made = new Set<string>();

/**
 * The `cgroup.procs` file of a group that gives a process memoryMb's CPU share, or why none could be
 * made. Call removeCpuShares() after, always.
 */
export function makeCpuShare(memoryMb: number): { procsFile: string } | { notMeasured: string } {
  const directory = join(CPU_HIERARCHY, `plant-store-bench-${process.pid}-${memoryMb}mb`);
  try {
    mkdirSync(directory);
    made.add(directory);
    const fraction = cpuFraction(memoryMb);
    const period = PERIOD_MICROS * Math.ceil(MIN_QUOTA_MICROS / (PERIOD_MICROS * fraction));
    writeFileSync(join(directory, "cpu.cfs_period_us"), String(period));
    writeFileSync(join(directory, "cpu.cfs_quota_us"), String(Math.round(period * fraction)));
    return { procsFile: join(directory, "cgroup.procs") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return { notMeasured: `no cgroup v1 CPU quota here (${code}; needs root and ${CPU_HIERARCHY})` };
  }
}

/** Removes every group made; a group still holding a process stays, and is named. */
export function removeCpuShares(): string[] {
  const left: string[] = [];
  for (const directory of made) {
    try {
      rmdirSync(directory);
      made.delete(directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") made.delete(directory);
      else left.push(directory);
    }
  }
  return left;
}

process.once("exit", () => removeCpuShares());
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    removeCpuShares();
    process.exit(128 + (signal === "SIGINT" ? 2 : 15));
  });
}
