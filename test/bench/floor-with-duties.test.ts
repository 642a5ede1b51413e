/**
 * The floors with duties (bench/floor-with-duties.ts) are the bench's measure of what the API's duties
 * cost done plainly. A duty it skipped would make it cheap for nothing, and the bench only sends
 * valid creates, so here each duty is shown to refuse what the API refuses.
 */
import { describe, expect, it } from "vitest";
import {
  clientOfClaims,
  logLine,
  plantOfBody,
  putItemOf,
  type TokenPolicy,
} from "../../bench/floor-with-duties.ts";

const policy: TokenPolicy = { issuer: "https://issuer.test", clientIds: ["a", "b"], scope: "plants/write" };
const now = 1_800_000_000;

function payload(claims: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(claims)).toString("base64url");
}

const valid = { iss: policy.issuer, exp: now + 60, client_id: "b", scope: "openid plants/write" };

describe("the floor with duties: the token's claims", () => {
  it("accepts the claims the API accepts, and names the client", () => {
    expect(clientOfClaims(payload(valid), policy, now)).toBe("b");
  });

  it.each([
    ["another issuer", { ...valid, iss: "https://other.test" }],
    ["an expired token", { ...valid, exp: now - 1 }],
    ["no expiry", { ...valid, exp: undefined }],
    ["another client", { ...valid, client_id: "c" }],
    ["no scope", { ...valid, scope: "openid" }],
  ])("refuses %s", (_, claims) => {
    expect(() => clientOfClaims(payload(claims), policy, now)).toThrow();
  });
});

describe("the floor with duties: the body", () => {
  it("reads the id exactly, past 2^53", () => {
    expect(plantOfBody('{"id":9007199254740993,"name":"Fern","tag":"x"}')).toEqual({
      id: 9007199254740993n,
      name: "Fern",
      tag: "x",
    });
  });

  it("reads the id of the id key, not one written inside a name", () => {
    expect(plantOfBody('{"name":"\\"id\\":5,","id":7}').id).toBe(7n);
  });

  it("refuses an id it would read other than JSON.parse reads it (a repeated key)", () => {
    expect(() => plantOfBody('{"id":5,"name":"Fern","id":7}')).toThrow();
  });

  it.each([
    ["an unknown property", '{"id":1,"name":"Fern","colour":"green"}'],
    ["a fractional id", '{"id":1.5,"name":"Fern"}'],
    ["an id outside int64", '{"id":9223372036854775808,"name":"Fern"}'],
    ["no name", '{"id":1}'],
    ["an empty name", '{"id":1,"name":""}'],
    ["a tag too long", `{"id":1,"name":"Fern","tag":"${"t".repeat(65)}"}`],
    ["a list", "[1]"],
    ["no JSON", "{"],
  ])("refuses %s", (_, body) => {
    expect(() => plantOfBody(body)).toThrow();
  });
});

describe("the floor with duties: what it writes", () => {
  it("puts the plant, its id exact, never overwriting", () => {
    expect(JSON.parse(putItemOf("plants", { id: 2n ** 62n, name: "Fern" }))).toEqual({
      TableName: "plants",
      Item: { id: { N: "4611686018427387904" }, name: { S: "Fern" } },
      ConditionExpression: "attribute_not_exists(id)",
    });
  });

  it("logs each metric it names in its EMF directive, with its value", () => {
    const created = { clientId: "b", plant: { id: 5n, name: "Fern" } };
    const line = logLine(200, 1.234, "fn", created) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Metrics: { Name: string }[] }[] };
    };
    const names = line._aws.CloudWatchMetrics.flatMap((directive) => directive.Metrics.map((m) => m.Name));
    expect(names).toEqual(["Created", "StoreAttempts"]);
    for (const name of names) expect(line[name]).toBe(1);
    expect(line).toMatchObject({ plantId: "5", clientId: "b", FunctionName: "fn", latencyMs: 1.23 });
  });
});
