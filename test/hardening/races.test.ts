/**
 * Races against dynalite: concurrent creates of one id have exactly one winner (the conditional
 * put), identical creates are all safe replays, and distinct ids under load are all created.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS } from "../../support/events.ts";
import { type Harness, startHarness, TEST_TABLE } from "../../support/harness.ts";
import { expectErrorAnswer } from "../support/answers.ts";
import { readStoredItem } from "../support/stored-item.ts";

let harness: Harness;
let token: string;

beforeAll(async () => {
  // One process serves hundreds of concurrent creates here (a Lambda instance serves one at a time): on a
  // busy machine dynalite can take over the 1 s attempt timeout, and 200 timeouts at once would spend the
  // instance's retry quota (10 per retry) and answer 503. These tests are about who wins, not about time.
  harness = await startHarness({ STORE_ATTEMPT_TIMEOUT_MS: "20000", STORE_DEADLINE_MS: "20000" });
  token = await harness.issuer.mint();
});

afterAll(async () => {
  await harness.close();
});

function create(index: number, plant: { id: string; name: string }): Promise<ApiGatewayResult> {
  const version = PAYLOAD_VERSIONS[index % PAYLOAD_VERSIONS.length] ?? "2.0";
  return harness.handler(
    apiGatewayEvent(version, { token, body: `{"id":${plant.id},"name":"${plant.name}"}` }),
  );
}

const storedItem = (id: string) => readStoredItem(harness.dynamoDb.endpoint, TEST_TABLE, id);

test("50 concurrent identical creates: all 200 (safe replays), one item", async () => {
  const id = "-9223372036854775808";
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, index) => create(index, { id, name: "Fern" })),
  );
  expect(results.map((result) => result.statusCode)).toEqual(results.map(() => 200));
  for (const result of results) expect(JSON.parse(result.body)).toEqual({ name: "Fern" });
  expect(await storedItem(id)).toEqual({ id: { N: id }, name: { S: "Fern" } });
});

test("ten contents racing for one id, each sent 5 times: one content wins, its every copy 200, the rest 409", async () => {
  const id = "9223372036854775807";
  const plants = Array.from({ length: 50 }, (_, index) => ({ id, name: `Plant ${index % 10}` }));
  const results = await Promise.all(plants.map((plant, index) => create(index, plant)));

  const stored = (await storedItem(id)) as { name: { S: string } };
  expect(stored).toEqual({ id: { N: id }, name: { S: stored.name.S } });
  results.forEach((result, index) => {
    if (plants[index]?.name === stored.name.S) expect(result.statusCode, plants[index]?.name).toBe(200);
    else expectErrorAnswer(result, 409);
  });
  expect(results.filter((result) => result.statusCode === 200)).toHaveLength(5);
});

test("200 distinct ids created concurrently: all 200, all stored", async () => {
  const plants = Array.from({ length: 200 }, (_, index) => ({
    id: String(10_000_000 + index),
    name: `Plant ${index}`,
  }));
  const results = await Promise.all(plants.map((plant, index) => create(index, plant)));
  expect(results.filter((result) => result.statusCode !== 200)).toEqual([]);
  const stored = await Promise.all(plants.map((plant) => storedItem(plant.id)));
  expect(stored).toEqual(plants.map(({ id, name }) => ({ id: { N: id }, name: { S: name } })));
});
