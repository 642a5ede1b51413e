/**
 * `npx tsx bench/cpu-profile-summary.ts <file.cpuprofile> [top]`: where a V8 CPU profile's samples
 * fell, by function (self time) and by script, so a profile can be read without a browser.
 */
import { readFile } from "node:fs/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, topText = "25"] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: tsx bench/cpu-profile-summary.ts <file.cpuprofile> [top]");
const profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));

// Each sample's time is the delta to the next one; attribute it to the sampled (innermost) frame.
const byFunction = new Map<string, number>();
const byScript = new Map<string, number>();
profile.samples.forEach((nodeId, index) => {
  const micros = profile.timeDeltas[index + 1] ?? 0;
  const frame = nodes.get(nodeId)?.callFrame;
  if (frame === undefined) return;
  const script =
    frame.url.replace(/^.*\/node_modules\//, "").replace(/^file:\/\/.*?\/main\//, "") || "(native)";
  const name = `${frame.functionName || "(anonymous)"} ${script}:${frame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  byScript.set(script, (byScript.get(script) ?? 0) + micros);
});

const totalMs = (profile.endTime - profile.startTime) / 1000;
const print = (title: string, totals: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, Number(topText))) {
    console.log(`${(micros / 1000).toFixed(2).padStart(8)} ms  ${name}`);
  }
};
console.log(`${file}: ${totalMs.toFixed(1)} ms profiled`);
print("self time by function", byFunction);
print("self time by script", byScript);
