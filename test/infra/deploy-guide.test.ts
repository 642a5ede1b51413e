/**
 * docs/DEPLOY.md against the code: its generated blocks (the stack in figures, the alarms, the cost, the
 * options) are as `npm run generate` writes them from the synthesized stack (tools/deploy-facts.ts), it
 * names every output, and the commands it shares with the README read outputs the stack has. The policies
 * of docs/DEPLOY-POLICY.md are JSON.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { deployGuideFromCode } from "../../tools/deploy-facts.ts";
import { synthesizedTemplate } from "../support/synthesize.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const guide = read("docs/DEPLOY.md");
const readme = read("README.md");
// At the top level, as the other synthesizing tests do: a synth is slow-ish, and no test's timeout applies.
const template = synthesizedTemplate();

/** The `out()` shell helper a document defines. */
const outHelper = (text: string) => text.match(/^out\(\) \{.*\}$/m)?.[0];

describe("docs/DEPLOY.md's generated blocks", () => {
  it("are as npm run generate writes them from the code (run it after changing the stack)", () => {
    expect(deployGuideFromCode(guide, template)).toBe(guide);
  });

  it("follow the stack: an alarm fewer is a row and a count fewer", () => {
    const resources = { ...template.Resources };
    const [faults] = Object.keys(resources).filter((id) => id.startsWith("AlarmsFaults"));
    expect(faults).toBeDefined();
    delete resources[faults as string];
    const regenerated = deployGuideFromCode(guide, { ...template, Resources: resources });
    expect(regenerated).not.toContain("| `Faults` |");
    expect(guide).toContain("| `Faults` |");
    const alarmCount = (text: string) => /\| alarms \| (\d+),/.exec(text)?.[1];
    expect(Number(alarmCount(regenerated))).toBe(Number(alarmCount(guide)) - 1);
  });

  it("refuse an options table that leaves out an option the stack reads", () => {
    const withoutMemory = guide.replace(/^\| `memorySize` \|.*\n/m, "");
    expect(withoutMemory).not.toBe(guide);
    expect(() => deployGuideFromCode(withoutMemory, template)).toThrow(/missing memorySize/);
  });
});

describe("docs/DEPLOY.md's commands", () => {
  it("define the same output helper as the README, over the stack named in STACK", () => {
    expect(outHelper(guide)).toBeDefined();
    expect(outHelper(guide)).toBe(outHelper(readme));
    expect(outHelper(guide)).toContain('--stack-name "$STACK"');
  });

  it("name every output the stack has", () => {
    for (const key of Object.values(OUTPUT_KEYS)) expect(guide, key).toContain(`\`${key}\``);
  });

  it("read only outputs the stack has, here and in the README", () => {
    const known: string[] = Object.values(OUTPUT_KEYS);
    const read = [...`${guide}${readme}`.matchAll(/\$\(out (\w+)\)/g)].map((match) => match[1]);
    expect(read.length).toBeGreaterThan(3);
    for (const key of read) expect(known, `$(out ${key})`).toContain(key);
  });
});

describe("docs/DEPLOY-POLICY.md", () => {
  it("gives each policy document as JSON an operator can save and create", () => {
    const blocks = [...read("docs/DEPLOY-POLICY.md").matchAll(/^```json\n(\{[\s\S]*?)^```/gm)].map(
      (match) => match[1] ?? "",
    );
    expect(blocks.length).toBe(3);
    for (const block of blocks) expect(JSON.parse(block)).toHaveProperty("Statement");
  });
});
