/**
 * The function's trace documents against X-Ray's published segment document schema
 * (test/support/xray-segment-schema.ts): sequences of calls generated from a seed (DynamoDB operations
 * answered with successes, throttles, client errors, 5xx faults, unreadable bodies and reset connections,
 * repeated so that they count as retries; key-set downloads answered alike) run through the production pieces (lambda/tracing/invocation-tracing.ts with the
 * DynamoDB client and the key-set fetcher observed by it) against a loopback endpoint, and every
 * subsegment document the loopback daemon receives must pass the schema, closed to the fields it names,
 * with times in epoch seconds within the run. `npm run fuzz` runs more; FUZZ_SEED explores others.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createJwksFetcher, type KeySetFetcher } from "../../lambda/auth/key-set-download.ts";
import { systemClock } from "../../lambda/clock.ts";
import { createDynamoDbClient, type DynamoDbClient } from "../../lambda/store/dynamodb-client.ts";
import { THROTTLING_TYPES } from "../../lambda/store/dynamodb-faults.ts";
import { createInvocationTracing, type InvocationTracing } from "../../lambda/tracing/invocation-tracing.ts";
import { keySetFetchSubsegment, type TracedHeader } from "../../lambda/tracing/subsegments.ts";
import { parseDaemonAddress } from "../../lambda/tracing/trace-header.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";
import {
  type RawAnswer,
  type ReplayedAnswerServer,
  startReplayedAnswerServer,
} from "../support/replayed-answer.ts";
import { type FakeXRayDaemon, type SegmentDocument, startFakeXRayDaemon } from "../support/xray-daemon.ts";
import { type SegmentSchemaCheck, segmentSchemaCheck } from "../support/xray-segment-schema.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 30_2026);
const INVOCATIONS = fuzzRuns(40, 0.005);
const IDENTITY = {
  region: "eu-west-1",
  credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
};

interface Call {
  to: "DynamoDB" | "key set";
  operation: string;
  answer: RawAnswer;
}

const dynamoDbAnswer = fc.oneof(
  fc.constant<RawAnswer>({ status: 200, body: '{"Attributes":{"id":{"N":"1"},"name":{"S":"Fern"}}}' }),
  fc.constant<RawAnswer>({ status: 200, body: "{}" }),
  fc
    .tuple(
      fc.constantFrom(
        "ConditionalCheckFailedException",
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TransactionConflictException",
        "ValidationException",
        "ResourceNotFoundException",
        "InternalServerError",
        "ServiceUnavailable",
        // A proxy's type no DynamoDB sends, 40,000 characters: its document must still fit a datagram.
        `${"Proxy".repeat(8000)}Exception`,
      ),
      fc.constantFrom(400, 400, 429, 500, 503, 504),
      fc.boolean(),
    )
    .map(
      ([type, status, namespaced]): RawAnswer => ({
        status,
        body: JSON.stringify({
          __type: namespaced ? `com.amazonaws.dynamodb.v20120810#${type}` : type,
          message: "what went wrong",
        }),
      }),
    ),
  fc.constantFrom<RawAnswer>(
    { status: 502, body: "<html>Bad Gateway</html>" },
    { status: 200, body: '{"Attributes":' },
    "reset",
  ),
);

const keySetAnswer = fc.constantFrom<RawAnswer>(
  { status: 200, body: '{"keys":[]}' },
  { status: 404, body: "not here" },
  { status: 429, body: "slow down" },
  { status: 500, body: "" },
  { status: 503, body: "" },
  "reset",
);

const call: fc.Arbitrary<Call> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom("PutItem", "GetItem", "UpdateItem"), dynamoDbAnswer)
      .map(([operation, answer]) => ({ to: "DynamoDB" as const, operation, answer })),
  },
  {
    weight: 1,
    arbitrary: keySetAnswer.map((answer) => ({ to: "key set" as const, operation: "GET", answer })),
  },
);

/** An invocation's calls: a few, and an operation often repeated, as its retries are. */
const invocation = fc
  .array(call, { minLength: 1, maxLength: 5 })
  .chain((calls) => fc.nat({ max: 2 }).map((repeats) => [...calls, ...calls.slice(0, repeats)]));

let server: ReplayedAnswerServer;
let daemon: FakeXRayDaemon;
let tracing: InvocationTracing;
let client: DynamoDbClient;
let keySets: KeySetFetcher;
let checkSchema: SegmentSchemaCheck;

beforeAll(async () => {
  [server, daemon] = await Promise.all([startReplayedAnswerServer(), startFakeXRayDaemon()]);
  checkSchema = segmentSchemaCheck();
  const address = parseDaemonAddress(daemon.address);
  if (!address) throw new Error(`the fake daemon's address is not host:port: ${daemon.address}`);
  tracing = createInvocationTracing({
    address,
    throttlingTypes: THROTTLING_TYPES,
    tableName: "plants",
    region: "eu-west-1",
  });
  client = createDynamoDbClient({
    ...IDENTITY,
    endpoint: server.url,
    observeCall: tracing.observeDynamoDbCall,
  });
  keySets = createJwksFetcher(5_000, systemClock, tracing.observeKeySetFetch);
});

afterAll(async () => {
  await Promise.all([daemon.close(), server.close()]);
});

/** Makes the call, failing or not; resolves with how many documents it makes (a reset key set: two tries). */
async function make({ to, operation, answer }: Call): Promise<number> {
  server.answerWith(answer);
  if (to === "DynamoDB") {
    await client
      .call(operation, { TableName: "plants" }, new AbortController().signal)
      .catch(() => undefined);
    return 1;
  }
  await keySets.fetch(`${server.url}/.well-known/jwks.json?client=secret-marker`).catch(() => undefined);
  return answer === "reset" ? 2 : 1;
}

/** A sampled invocation's trace header, as Lambda gives it. */
function newTraceHeader(): TracedHeader {
  const root = `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString("hex")}`;
  return { root, parent: randomBytes(8).toString("hex"), sampled: true };
}

/** What the schema cannot say: ids in hex, times in epoch seconds within the run, never backwards. */
function timesAndIds(document: SegmentDocument, startedMs: number): string[] {
  const problems: string[] = [];
  const { id, start_time, end_time } = document as { id?: unknown; start_time?: unknown; end_time?: unknown };
  if (typeof id !== "string" || !/^[0-9a-f]{16}$/.test(id))
    problems.push(`id ${String(id)} is not 16 hex digits`);
  const nowSeconds = Date.now() / 1000 + 1;
  for (const [name, time] of [
    ["start_time", start_time],
    ["end_time", end_time],
  ] as const) {
    if (typeof time !== "number" || time < startedMs / 1000 - 1 || time > nowSeconds)
      problems.push(`${name} ${String(time)} is not epoch seconds within the run`);
  }
  if (typeof start_time === "number" && typeof end_time === "number" && end_time < start_time)
    problems.push("end_time is before start_time");
  return problems;
}

describe("the function's trace documents and X-Ray's segment document schema", () => {
  test(
    `every subsegment of ${INVOCATIONS} generated invocations passes the schema`,
    async () => {
      const startedMs = Date.now();
      const invocations = fc.sample(invocation, { numRuns: INVOCATIONS, seed: SEED });

      const failures: string[] = [];
      const seen = { fault: 0, error: 0, throttle: 0, cause: 0, retries: 0, remote: 0, aws: 0 };
      for (const calls of invocations) {
        const header = newTraceHeader();
        let expected = 0;
        await tracing.run(header, async () => {
          for (const each of calls) expected += await make(each);
        });
        for (const document of await daemon.received(header.root, expected)) {
          const problems = [...checkSchema(document), ...timesAndIds(document, startedMs)];
          if (JSON.stringify(document).includes("secret-marker"))
            problems.push("the key set's query is in it");
          if (problems.length > 0) failures.push(`${JSON.stringify(document)}: ${problems.join(" | ")}`);
          for (const flag of ["fault", "error", "throttle", "cause"] as const)
            if (document[flag]) seen[flag]++;
          const aws = document.aws as { retries?: number } | undefined;
          if ((aws?.retries ?? 0) > 0) seen.retries++;
          if (document.namespace === "remote") seen.remote++;
          if (document.namespace === "aws") seen.aws++;
        }
      }
      expect(failures.slice(0, 5), `${failures.length} documents fail the schema`).toEqual([]);
      // The corpus reached every kind of document.
      for (const [kind, count] of Object.entries(seen)) expect(count, kind).toBeGreaterThan(0);
    },
    fuzzTimeoutMs(INVOCATIONS, 200),
  );

  test("a key-set download from an IPv6 host, or with a long path, is named and shown within X-Ray's limits", () => {
    const startMs = Date.now();
    for (const url of [
      "https://[2001:db8::1]:8443/.well-known/jwks.json",
      `https://${"issuer.".repeat(40)}example/.well-known/jwks.json`,
      `https://issuer.example/${"keys/".repeat(60)}jwks.json`,
    ]) {
      const document = keySetFetchSubsegment(newTraceHeader(), {
        url,
        outcome: { status: 200 },
        startMs,
        endMs: startMs + 5,
      });
      expect(checkSchema(document), url).toEqual([]);
    }
  });
});
