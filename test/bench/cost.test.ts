import { describe, expect, it } from "vitest";
import { costPerMillionCreates, cpuCostPerMillionCallsUsd, MEMORY_MB_PER_VCPU } from "../../bench/cost.ts";
import { LAMBDA_ARM64_USD_PER_GB_SECOND } from "../../bench/prices.ts";

describe("the cost of CPU beyond a floor (bench item 5)", () => {
  it("prices CPU at a full vCPU as that many GB-seconds of 1,769 MB", () => {
    const usd = cpuCostPerMillionCallsUsd(150, MEMORY_MB_PER_VCPU);
    expect(usd).toBeCloseTo(1e6 * 150e-6 * (MEMORY_MB_PER_VCPU / 1024) * LAMBDA_ARM64_USD_PER_GB_SECOND, 12);
  });

  it("costs the same at any memory up to one vCPU, and more above it, where the CPU stops being stretched", () => {
    const atFullVcpu = cpuCostPerMillionCallsUsd(150, MEMORY_MB_PER_VCPU);
    for (const memoryMb of [128, 512, 1024]) {
      expect(cpuCostPerMillionCallsUsd(150, memoryMb)).toBeCloseTo(atFullVcpu, 12);
    }
    expect(cpuCostPerMillionCallsUsd(150, 2 * MEMORY_MB_PER_VCPU)).toBeCloseTo(2 * atFullVcpu, 12);
  });

  it("is what the added duration costs on average under Lambda's rounding up to the millisecond", () => {
    const memoryMb = 1024;
    const extraCpuMicros = 270;
    const stretchedMs = extraCpuMicros / 1000 / (memoryMb / MEMORY_MB_PER_VCPU);
    // Durations spread evenly over one millisecond, each billed with and without the added CPU.
    const starts = Array.from({ length: 1000 }, (_, step) => 4 + step / 1000);
    const billedDifference = starts.map(
      (durationMs) =>
        costPerMillionCreates(durationMs + stretchedMs, memoryMb).lambdaComputeUsd -
        costPerMillionCreates(durationMs, memoryMb).lambdaComputeUsd,
    );
    const mean = billedDifference.reduce((sum, usd) => sum + usd, 0) / billedDifference.length;
    // Within the steps' own coarseness: a thousandth of a millisecond in half a millisecond.
    expect(cpuCostPerMillionCallsUsd(extraCpuMicros, memoryMb) / mean).toBeCloseTo(1, 2);
  });
});
