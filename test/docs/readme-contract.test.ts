/**
 * README.md's field table and 409 example restate the contract, its 413 row and local URLs the code:
 * `npm run generate` writes them (tools/readme-contract.ts). The README must be as the generator writes it,
 * and a field added to the document shows in both without any other edit.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeFields } from "../../lambda/plants/create-plant.ts";
import { PLANT_FIELDS, type PlantField } from "../../lambda/plants/plant.ts";
import { fieldTable, readmeFromContract, readOpenApiDocument } from "../../tools/readme-contract.ts";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const document = readOpenApiDocument();

/** A copy of the document with one more optional text field, as docs/CHANGING.md adds one. */
function withField(name: string): typeof document {
  const copy = structuredClone(document) as {
    components: { schemas: Record<string, Record<string, unknown>> };
  };
  for (const schema of ["NewPlant", "Plant"]) {
    const properties = copy.components.schemas[schema]?.properties as Record<string, unknown>;
    properties[name] = { $ref: "#/components/schemas/PlantTag" };
  }
  return copy;
}

describe("README.md", () => {
  it("is as npm run generate writes it from openapi/openapi.yaml (run it after editing the document)", () => {
    expect(readmeFromContract(readme, document)).toBe(readme);
  });

  it("states the code's body limit and port: a stale one is not what npm run generate writes", () => {
    for (const stale of [
      readme.replace(/at most \d+ are accepted/, "at most 1 are accepted"),
      readme.replace(/127\.0\.0\.1:\d+/, "127.0.0.1:1"),
    ]) {
      expect(stale).not.toBe(readme);
      expect(readmeFromContract(stale, document)).toBe(readme);
    }
  });

  it("shows every field of NewPlant, with the 409 example naming every stored one", () => {
    expect(readme).toContain(fieldTable(document));
    const fields = describeFields(PLANT_FIELDS);
    expect(readme).toContain(`the id exists with another ${fields}; nothing is changed`);
    expect(readme).toContain(`\`a plant with id 1 already exists with another ${fields}\``);
  });
});

describe("a field added to the document", () => {
  // Names the document does not have yet: after `color` is added, the next ones.
  const added = ["color", "scientific_name", "habitat"].filter(
    (name) => !PLANT_FIELDS.some((field) => field.name === name),
  );
  it.each(added.slice(0, 2))("%s: gets its row and its place in the 409 example", (name) => {
    const regenerated = readmeFromContract(readme, withField(name));
    expect(regenerated).toContain(
      `| \`${name}\` | string | optional; 1 to 64 characters; a \`PlantText\`: not blank, no control characters, no U+FFFD |`,
    );
    const fields = describeFields([...PLANT_FIELDS, { name } as PlantField]);
    expect(regenerated).toContain(`the id exists with another ${fields}; nothing is changed`);
    expect(regenerated).toContain(`a plant with id 1 already exists with another ${fields}\``);
    // Nothing else of the README changes.
    const withoutContract = (text: string) =>
      text.replace(/^\| `\w+` \| \w+ \| .*\|\n/gm, "").replace(/exists with another [^`;]*/g, "");
    expect(withoutContract(regenerated)).toBe(withoutContract(readme));
  });
});
