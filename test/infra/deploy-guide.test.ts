/**
 * docs/DEPLOY.md against the stack: the output helper is the README's, the outputs it reads exist, and the
 * deploy-time rules and alarms it lists are the stack's.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEPLOY_RULES } from "../../infra/rules/index.ts";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { synthesizedTemplate } from "../support/synthesize.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const guide = read("docs/DEPLOY.md");
const readme = read("README.md");
// At the top level, as the other synthesizing tests do: a synth is slow-ish, and no test's timeout applies.
const template = synthesizedTemplate();

/** The `out()` shell helper a document defines. */
const outHelper = (text: string) => text.match(/^out\(\) \{.*\}$/m)?.[0];

describe("docs/DEPLOY.md", () => {
  it("defines the same output helper as the README, over the stack named in STACK", () => {
    expect(outHelper(guide)).toBeDefined();
    expect(outHelper(guide)).toBe(outHelper(readme));
    expect(outHelper(guide)).toContain('--stack-name "$STACK"');
  });

  it("reads only outputs the stack has, here and in the README", () => {
    const known: string[] = Object.values(OUTPUT_KEYS);
    const read = [...`${guide}${readme}`.matchAll(/\$\(out (\w+)\)/g)].map((match) => match[1]);
    expect(read.length).toBeGreaterThan(5);
    for (const key of read) expect(known, `$(out ${key})`).toContain(key);
  });

  it("lists every deploy-time rule, and no other", () => {
    const listed = [...guide.matchAll(/^\| `(PlantStore-\w+)` \|/gm)].map((match) => match[1]);
    expect(listed.sort()).toEqual(DEPLOY_RULES.map((rule) => rule.id).sort());
  });

  it("lists every alarm of the stack, by the id in its logical id, and no other", () => {
    const alarms = Object.keys(template.Resources ?? {})
      .filter((id) => id.startsWith("Alarms") && !id.startsWith("AlarmsAlarmTopic"))
      .map((id) => id.replace(/^Alarms/, "").replace(/[0-9A-F]{8}$/, ""));
    const section = guide.slice(guide.indexOf("## Alarms"), guide.indexOf("## A custom domain"));
    const listed = [...section.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1]);
    expect(listed.sort()).toEqual(alarms.sort());
  });
});
