import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { patternRefusals } from "../../lambda/generated/pattern-refusals.js";
import { GENERATED_DIR, generatedFiles } from "../../tools/generate-validator.ts";

const document = parse(readFileSync(new URL("../../openapi/openapi.yaml", import.meta.url), "utf8"), {
  intAsBigInt: true,
}) as {
  components: {
    schemas: Record<
      string,
      {
        required?: string[];
        properties: Record<string, unknown>;
        allOf?: { $ref?: string; pattern?: string; "x-refusal"?: string }[];
      }
    >;
  };
};

describe("the OpenAPI document", () => {
  it.each([...generatedFiles()])(
    "is what the committed %s was generated from (run npm run generate after editing it)",
    (name, content) => {
      expect(readFileSync(join(GENERATED_DIR, name), "utf8")).toBe(content);
    },
  );

  it("keeps the spec's shapes: Plant is NewPlant without id, NewPlant requiring id and name, Error", () => {
    const { Plant, NewPlant, Error: ErrorSchema } = document.components.schemas;
    const newPlantFields = Object.keys(NewPlant?.properties ?? {});
    expect(newPlantFields.slice(0, 3)).toEqual(["id", "name", "tag"]);
    expect(Object.keys(Plant?.properties ?? {})).toEqual(newPlantFields.slice(1));
    expect(NewPlant?.required).toEqual(["id", "name"]);
    expect(NewPlant?.properties.id).toMatchObject({
      type: "integer",
      format: "int64",
      minimum: -9223372036854775808n,
      maximum: 9223372036854775807n,
    });
    expect(ErrorSchema?.required).toEqual(["error", "message"]);
  });

  it("gives names and tags the same text rules, each refused with the message the API answers", () => {
    const { PlantName, PlantTag, PlantText } = document.components.schemas;
    for (const schema of [PlantName, PlantTag]) {
      expect(schema?.allOf).toEqual([{ $ref: "#/components/schemas/PlantText" }]);
    }
    const refusals = Object.fromEntries(
      (PlantText?.allOf ?? []).map((rule) => [rule.pattern, rule["x-refusal"]]),
    );
    expect(refusals).toEqual(patternRefusals);
    expect(Object.values(refusals)).toEqual([
      "must not be blank",
      "must not contain control characters",
      "contains bytes that are not UTF-8 (U+FFFD)",
    ]);
  });
});
