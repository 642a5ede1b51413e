/**
 * Adding a field is: edit openapi/openapi.yaml, `npm run generate`, test. Shown here on a copy of the
 * document with an optional string field added, generated into a temp dir: the new field is validated,
 * stored, and compared on a replay, with no hand-written source changed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { createPlant, describeFields } from "../../lambda/plants/create-plant.ts";
import { type NewPlant, PLANT_FIELDS, type PlantField } from "../../lambda/plants/plant.ts";
import { fromItem, toItem } from "../../lambda/store/plant-item.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { OPENAPI_PATH, writeGeneratedFiles } from "../../tools/generate-validator.ts";

/** A name no schema of the project would use, so that the test holds whatever fields were added since. */
const NEW_FIELD = "addedByTheTest";
let workDir: string;

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), "plant-schema-"));
});
afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

/** A copy of the OpenAPI document with `edit` applied to it; returns the copy's path. */
function editedOpenApi(name: string, edit: (document: ReturnType<typeof parseDocument>) => void): string {
  const document = parseDocument(readFileSync(OPENAPI_PATH, "utf8"), { intAsBigInt: true });
  edit(document);
  const path = join(workDir, `${name}.yaml`);
  writeFileSync(path, document.toString());
  return path;
}

const newFieldSchema = {
  type: "string",
  minLength: 1,
  maxLength: 32,
  description: "The colour of its leaves.",
};
const addField = (schemaNames: string[], schema: object) => (document: ReturnType<typeof parseDocument>) => {
  for (const schemaName of schemaNames) {
    document.setIn(
      ["components", "schemas", schemaName, "properties", NEW_FIELD],
      document.createNode(schema),
    );
  }
};

interface Generated {
  PLANT_FIELDS: readonly PlantField[];
  validate: ((data: unknown) => boolean) & { errors?: { instancePath: string; keyword: string }[] | null };
}

async function generateFrom(openApiPath: string, name: string): Promise<Generated> {
  const outputDir = join(workDir, name);
  writeGeneratedFiles(openApiPath, outputDir);
  const schemaModule = await import(pathToFileURL(join(outputDir, "plant-schema.ts")).href);
  const validatorModule = await import(pathToFileURL(join(outputDir, "validate-new-plant.js")).href);
  return { PLANT_FIELDS: schemaModule.PLANT_FIELDS, validate: validatorModule.validate };
}

describe("an optional string field added to the OpenAPI document", () => {
  let generated: Generated;
  beforeAll(async () => {
    generated = await generateFrom(
      editedOpenApi("with-new-field", addField(["NewPlant", "Plant"], newFieldSchema)),
      "out",
    );
  });

  it("is validated by the generated validator, with its own rules", () => {
    expect(generated.validate({ id: 1, name: "Fern", [NEW_FIELD]: "green" })).toBe(true);
    expect(generated.validate({ id: 1, name: "Fern" })).toBe(true);
    expect(generated.validate({ id: 1, name: "Fern", [NEW_FIELD]: "g".repeat(33) })).toBe(false);
    expect(generated.validate.errors?.[0]).toMatchObject({
      instancePath: `/${NEW_FIELD}`,
      keyword: "maxLength",
    });
    expect(generated.validate({ id: 1, name: "Fern", [`${NEW_FIELD}s`]: "green" })).toBe(false);
  });

  it("joins the stored fields, after the schema's others", () => {
    expect(generated.PLANT_FIELDS).toEqual([...PLANT_FIELDS, { name: NEW_FIELD, required: false }]);
  });

  it("makes a replay with another value of it a 409 naming it, and an identical one a replay", async () => {
    const store = new InMemoryPlantStore();
    const plant = (color: string) =>
      ({ id: 7n, name: "Fern", tag: "indoor", [NEW_FIELD]: color }) as NewPlant;
    const create = (color: string) => createPlant(store, plant(color), generated.PLANT_FIELDS);

    expect(await create("green")).toEqual({
      plant: { name: "Fern", tag: "indoor", [NEW_FIELD]: "green" },
      replayed: false,
      storeCalls: 1,
    });
    expect((await create("green")).replayed).toBe(true);
    const conflict = create("red");
    await expect(conflict).rejects.toMatchObject({ code: "PlantConflict" });
    await expect(conflict).rejects.toThrow(
      new RegExp(`^a plant with id 7 already exists with another name, .* or ${NEW_FIELD}$`),
    );
    expect(store.plants.get(7n)).toEqual(plant("green"));
    // What the list protects from: with the fields of before, the other colour would pass as a replay.
    expect((await createPlant(store, plant("red"), PLANT_FIELDS)).replayed).toBe(true);
  });

  it("is written to and read from the DynamoDB item", () => {
    const plant = { id: 2n ** 60n, name: "Fern", [NEW_FIELD]: "green" } as NewPlant;
    const item = toItem(plant, generated.PLANT_FIELDS);
    expect(item).toEqual({
      id: { N: "1152921504606846976" },
      name: { S: "Fern" },
      [NEW_FIELD]: { S: "green" },
    });
    expect(fromItem(item, generated.PLANT_FIELDS)).toEqual(plant);
    // Without the field in the list, the item would silently lose it.
    expect(toItem(plant, PLANT_FIELDS)).not.toHaveProperty(NEW_FIELD);
  });
});

it("the conflict message lists the fields as a sentence", () => {
  const fields = (...names: string[]) => names.map((name) => ({ name, required: false }) as PlantField);
  expect(describeFields(fields("name"))).toBe("name");
  expect(describeFields(fields("name", "tag"))).toBe("name or tag");
  expect(describeFields(fields("name", "tag", "color"))).toBe("name, tag or color");
});

describe("the generator refuses a schema it cannot serve", () => {
  it("a field added to NewPlant but not to Plant, the answer", () => {
    const path = editedOpenApi("new-plant-only", addField(["NewPlant"], newFieldSchema));
    expect(() => writeGeneratedFiles(path, join(workDir, "refused-1"))).toThrow(
      "Plant must be NewPlant without its id",
    );
  });

  it("a field whose name is not an identifier, which the generated types could not name", () => {
    const path = editedOpenApi("spaced-name", (document) => {
      for (const schemaName of ["NewPlant", "Plant"]) {
        document.setIn(
          ["components", "schemas", schemaName, "properties", "not a field"],
          document.createNode(newFieldSchema),
        );
      }
    });
    expect(() => writeGeneratedFiles(path, join(workDir, "refused-3"))).toThrow(
      "NewPlant.not a field: a property's name must be an identifier (letters, digits, _)",
    );
  });

  it("a field that is not a string", () => {
    const path = editedOpenApi("boolean-field", addField(["NewPlant", "Plant"], { type: "boolean" }));
    expect(() => writeGeneratedFiles(path, join(workDir, "refused-2"))).toThrow(
      `NewPlant.${NEW_FIELD}: only strings and int64 integers are supported`,
    );
  });
});
