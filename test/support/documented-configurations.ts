import { readFileSync } from "node:fs";
import { ISSUER_KEY_SET_FILE } from "./synthesize.ts";

/** What the guide's shell values stand for here: a retained table's name, the key-set file it downloads. */
const DOCUMENTED_VALUES: Record<string, string> = {
  '"$TABLE"': "PlantStore-PlantsTable1A2B3C4D-0A1B2C3D4E5F",
  "issuer-jwks.json": ISSUER_KEY_SET_FILE,
};

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
        DOCUMENTED_VALUES[value] ?? value.replace(/^"|"$/g, ""),
      ]),
    ),
  );
}
