/**
 * Every link between the repository's Markdown files leads somewhere: the file exists and, when the
 * link names a section, the file has a heading of that anchor (GitHub's form: lower case, punctuation
 * dropped, spaces as hyphens, a repeated heading numbered). A document moved or a heading reworded
 * breaks links its readers follow; here that fails instead.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

function markdownFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.md"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return listed.split("\n").filter((file) => file !== "" && existsSync(join(ROOT, file)));
}

/** A heading's anchor as GitHub writes it. */
function headingAnchor(heading: string): string {
  return heading
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown text's headings, outside fenced code. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const anchor = headingAnchor(heading);
    const times = seen.get(anchor) ?? 0;
    seen.set(anchor, times + 1);
    anchors.add(times === 0 ? anchor : `${anchor}-${times}`);
  }
  return anchors;
}

/** The relative links of a Markdown text, fenced code left out: `path`, `path#anchor` or `#anchor`. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("links between the repository's documents", () => {
  it("reads GitHub's anchors from headings, repeated ones numbered", () => {
    expect([...anchorsOf("# Warm CPU: the create, budget 1.15×\n## `npm test`\n## A\n## A\n")]).toEqual([
      "warm-cpu-the-create-budget-115",
      "npm-test",
      "a",
      "a-1",
    ]);
  });

  const files = markdownFiles();
  it.each(files)("%s: every relative link reaches its file and section", (file) => {
    const broken = relativeLinks(readFileSync(join(ROOT, file), "utf8")).filter((target) => {
      const [path = "", anchor] = target.split("#");
      const linked = path === "" ? join(ROOT, file) : join(ROOT, dirname(file), decodeURI(path));
      if (!existsSync(linked)) return true;
      return (
        anchor !== undefined && linked.endsWith(".md") && !anchorsOf(readFileSync(linked, "utf8")).has(anchor)
      );
    });
    expect(broken).toEqual([]);
  });
});
