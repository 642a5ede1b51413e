import { readFileSync } from "node:fs";

/** What `-c tableName="$TABLE"` stands for in the guide: a name of the shape a retained table has. */
const RETAINED_TABLE = "PlantStore-PlantsTable1A2B3C4D-0A1B2C3D4E5F";

/**
 * Every `npx cdk deploy …` of docs/DEPLOY.md (continued lines joined), as the context it passes: the
 * configurations the guide documents, each of which must synthesize clean and pass cfn-lint.
 */
export function documentedConfigurations(): Record<string, string>[] {
  const page = readFileSync(new URL("../../docs/DEPLOY.md", import.meta.url), "utf8").replace(
    /\\\n\s*/g,
    " ",
  );
  return [...page.matchAll(/^npx cdk deploy(.*)$/gm)].map((match) =>
    Object.fromEntries(
      [...(match[1] ?? "").matchAll(/-c (\w+)=("[^"]*"|\S+)/g)].map(([, key = "", value = ""]) => [
        key,
        value === '"$TABLE"' ? RETAINED_TABLE : value.replace(/^"|"$/g, ""),
      ]),
    ),
  );
}
