/**
 * `npx tsx bench/cpu-profile-summary.ts <file.cpuprofile | folder>... [top]`: where V8 CPU profiles'
 * samples fell, by function (self time) and by script, so a profile can be read without a browser.
 * Given several profiles (or a folder of them, such as one subject's cold-path processes), it prints
 * the mean per profile, which a single, noisy process does not give.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

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

const args = process.argv.slice(2);
const topText = args.length > 1 && /^\d+$/.test(args.at(-1) ?? "") ? (args.pop() as string) : "25";
if (args.length === 0) {
  throw new Error("usage: tsx bench/cpu-profile-summary.ts <file.cpuprofile | folder>... [top]");
}

async function profileFiles(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) {
      const entries = await readdir(path, { recursive: true });
      files.push(
        ...entries.filter((entry) => entry.endsWith(".cpuprofile")).map((entry) => join(path, entry)),
      );
    } else {
      files.push(path);
    }
  }
  return files.sort();
}

const files = await profileFiles(args);
if (files.length === 0) throw new Error(`no .cpuprofile in ${args.join(", ")}`);
const byFunction = new Map<string, number>();
const byScript = new Map<string, number>();
let totalMicros = 0;

for (const file of files) {
  const profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  totalMicros += profile.endTime - profile.startTime;
  // Each sample's time is the delta to the next one; attribute it to the sampled (innermost) frame.
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
}

const perProfileMs = (micros: number) => micros / 1000 / files.length;
const print = (title: string, totals: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, Number(topText))) {
    console.log(`${perProfileMs(micros).toFixed(2).padStart(8)} ms  ${name}`);
  }
};
const what = files.length === 1 ? files[0] : `${files.length} profiles, mean per profile`;
console.log(`${what}: ${perProfileMs(totalMicros).toFixed(1)} ms profiled`);
print("self time by function", byFunction);
print("self time by script", byScript);
