/** client/generated/openapi.ts is what openapi/openapi.yaml gives: run `npm run generate` after editing it. */
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { CLIENT_TYPES_PATH, clientTypesSource } from "../../tools/generate-client.ts";

it("client/generated/openapi.ts is what the document gives (run npm run generate after editing it)", async () => {
  expect(await readFile(CLIENT_TYPES_PATH, "utf8")).toBe(await clientTypesSource());
});
