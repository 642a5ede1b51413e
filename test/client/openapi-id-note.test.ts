/**
 * The OpenAPI document is what a caller in another language reads: its id tells how to keep an int64
 * exact there, and points TypeScript callers to this client, which must exist where it says.
 */
import { existsSync, readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { parse } from "yaml";
import * as client from "../../client/index.ts";

const document = parse(readFileSync(new URL("../../openapi/openapi.yaml", import.meta.url), "utf8")) as {
  components: { schemas: { NewPlant: { properties: { id: { description: string } } } } };
};
const idNote = document.components.schemas.NewPlant.properties.id.description.replace(/\s+/g, " ");

it("says how to keep the id exact in other languages: a 64-bit integer type or a string of digits", () => {
  expect(idNote).toContain("hold it in a 64-bit integer type (Java `long`, Go `int64`");
  expect(idNote).toContain("or as a string of digits, and write it into the body as bare digits");
  expect(idNote).toContain("`JSON.parse` round every id beyond 2^53");
});

it("points TypeScript callers to the client in client/, which takes the id as a bigint or a string", () => {
  expect(idNote).toContain(
    "From TypeScript, the client in `client/` of this repository takes the id as a `bigint` or a string",
  );
  expect(existsSync(new URL("../../client/index.ts", import.meta.url))).toBe(true);
  // That it takes them, exactly, is create-plant.test.ts's.
  expect(typeof client.createPlantStoreClient).toBe("function");
});
