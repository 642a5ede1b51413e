/**
 * The function's own DynamoDB call (the one part of the store not a library's: docs/DESIGN.md) against
 * the AWS SDK v3, differentially, on inputs generated from a seed:
 * - attribute values: toItem against @aws-sdk/util-dynamodb's marshall, fromItem against its unmarshall
 *   (int64 ids as NumberValue), on plants over the whole int64 range and stored items with extra, missing
 *   and mistyped attributes;
 * - answers: the same raw HTTP answer bytes (successes with Item or Attributes; errors with `__type`
 *   namespaced or plain, or `code`, with `message`, `Message` or none, a stored Item or not, at odd
 *   statuses; bodies that are no JSON object; reset connections) are read by the function's client
 *   (lambda/store/dynamodb-client.ts, classified by dynamodb-faults.ts) and by the SDK's DynamoDBClient
 *   (classified as its standard retry strategy does, with @smithy/core's functions). The error type, the
 *   stored plant and the retry classification must agree, but for the DIFFERENCES listed with their
 *   reasons; an entry no answer needs fails too.
 * `npm run fuzz` runs a larger corpus; FUZZ_SEED explores another one.
 */
import { isDeepStrictEqual } from "node:util";
import { DynamoDBClient, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { marshall, NumberValueImpl as NumberValue, unmarshall } from "@aws-sdk/util-dynamodb";
import { isServerError, isThrottlingError, isTransientError } from "@smithy/core/retry";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type NewPlant, PLANT_FIELDS } from "../../lambda/plants/plant.ts";
import {
  createDynamoDbClient,
  type DynamoDbClient,
  DynamoDbError,
} from "../../lambda/store/dynamodb-client.ts";
import { retryableFault } from "../../lambda/store/dynamodb-faults.ts";
import { fromItem, type Item, toItem } from "../../lambda/store/plant-item.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";
import { INT64_MAX, INT64_MIN } from "../support/plant-arbitraries.ts";
import {
  type RawAnswer,
  type ReplayedAnswerServer,
  startReplayedAnswerServer,
} from "../support/replayed-answer.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 30_2026);
const ITEM_RUNS = fuzzRuns(500, 0.05);
const ANSWER_RUNS = fuzzRuns(300, 0.01);
const TABLE = "plants";
const IDENTITY = {
  region: "eu-west-1",
  credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
};

// ---- Plants and stored items -------------------------------------------------------------------------

const int64 = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 10n ** 18n),
);
const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 });

/** A plant with every field the schema has, each optional one present or not. */
const plant: fc.Arbitrary<NewPlant> = fc
  .tuple(
    int64,
    fc.tuple(...PLANT_FIELDS.map(({ required }) => (required ? text : fc.option(text, { nil: undefined })))),
  )
  .map(([id, values]) => {
    const fields = Object.fromEntries(PLANT_FIELDS.map(({ name }, index) => [name, values[index]]));
    return { id, ...fields } as NewPlant;
  });

type AttributeValue = Record<string, unknown>;
const attributeValue: fc.Arbitrary<AttributeValue> = fc.oneof(
  text.map((S) => ({ S })),
  int64.map((value) => ({ N: value.toString() })),
  fc.boolean().map((BOOL) => ({ BOOL })),
  fc.constant({ NULL: true }),
  fc.array(text, { minLength: 1, maxLength: 3 }).map((strings) => ({ SS: [...new Set(strings)] })),
  fc
    .array(
      text.map((S) => ({ S })),
      { maxLength: 3 },
    )
    .map((L) => ({ L })),
);

/** An item as DynamoDB could return it: a stored plant, maybe with attributes added, missing or mistyped. */
const storedItem = fc
  .tuple(
    plant,
    fc.dictionary(fc.constantFrom("color", "createdAt", "history"), attributeValue, { maxKeys: 2 }),
    fc.constantFrom(
      "as stored",
      "as stored",
      "as stored",
      "no id",
      "id as S",
      ...PLANT_FIELDS.flatMap(({ name }) => [`no ${name}`, `${name} as N`]),
    ),
    int64,
  )
  .map(([stored, extras, change, number]) => {
    const item: Record<string, AttributeValue> = {
      ...(marshall(stored, { removeUndefinedValues: true }) as Record<string, unknown> as Record<
        string,
        AttributeValue
      >),
      ...extras,
    };
    const [what, field = "id"] =
      change === "as stored"
        ? []
        : change.startsWith("no ")
          ? ["no", change.slice(3)]
          : ["as", change.split(" ")[0]];
    if (what === "no") delete item[field];
    if (what === "as") item[field] = field === "id" ? { S: String(stored.id) } : { N: number.toString() };
    return item;
  });

/**
 * The plant the SDK reads from an item (unmarshall, ids as NumberValue): the id a number, each field a
 * string; a field of another type is as absent, and an item lacking the id or a required field is none.
 */
function plantReadBySdk(item: Record<string, unknown>): NewPlant | "not a plant" {
  const value = unmarshall(item as never, { wrapNumbers: true });
  if (!(value.id instanceof NumberValue)) return "not a plant";
  const read: Record<string, unknown> = { id: value.id.toBigInt() };
  for (const { name, required } of PLANT_FIELDS) {
    if (typeof value[name] === "string") read[name] = value[name];
    else if (required) return "not a plant";
  }
  return read as unknown as NewPlant;
}

function plantReadByFunction(item: unknown): NewPlant | "not a plant" {
  try {
    return fromItem(item as Item);
  } catch {
    return "not a plant";
  }
}

describe("attribute values: the function's and util-dynamodb's", () => {
  test(`toItem writes ${ITEM_RUNS} plants as marshall does, ids over the whole int64 range`, () => {
    fc.assert(
      fc.property(plant, (subject) => {
        expect(toItem(subject)).toEqual(marshall(subject, { removeUndefinedValues: true }));
      }),
      { numRuns: ITEM_RUNS, seed: SEED },
    );
  });

  test(`fromItem reads ${ITEM_RUNS} stored items as unmarshall does, int64 ids as NumberValue`, () => {
    let plants = 0;
    fc.assert(
      fc.property(storedItem, (item) => {
        const bySdk = plantReadBySdk(item);
        expect(plantReadByFunction(item)).toEqual(bySdk);
        if (bySdk !== "not a plant") plants++;
      }),
      { numRuns: ITEM_RUNS, seed: SEED },
    );
    expect(plants).toBeGreaterThan(ITEM_RUNS / 3);
  });
});

// ---- Answers -----------------------------------------------------------------------------------------

interface Scenario {
  operation: "PutItem" | "GetItem";
  answer: RawAnswer;
  /** What the answer is made of, for the list of differences. */
  notes: string[];
}

const ERROR_TYPES = [
  "ConditionalCheckFailedException",
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TransactionConflictException",
  "ReplicatedWriteConflictException",
  "ResourceNotFoundException",
  "ValidationException",
  "ItemCollectionSizeLimitExceededException",
  "LimitExceededException",
  "UnrecognizedClientException",
  "AccessDeniedException",
  "InvalidSignatureException",
  "InternalServerError",
  "ServiceUnavailable",
  "SomeFutureException",
];
const NAMESPACES = [
  "com.amazonaws.dynamodb.v20120810#",
  "com.amazon.coral.service#",
  "com.amazon.coral.availability#",
  "com.amazon.coral.validate#",
];
const ERROR_STATUSES = [400, 400, 400, 500, 503, 301, 403, 404, 413, 429, 501, 502, 504, 507, 599];

const success = fc
  .tuple(fc.constantFrom<Scenario["operation"]>("PutItem", "GetItem"), fc.option(storedItem), fc.boolean())
  .map(([operation, item, capacity]): Scenario => {
    const body: Record<string, unknown> = {};
    if (item) body[operation === "PutItem" ? "Attributes" : "Item"] = item;
    if (capacity) body.ConsumedCapacity = { TableName: TABLE, CapacityUnits: 1 };
    return { operation, answer: { status: 200, body: JSON.stringify(body) }, notes: ["success"] };
  });

const errorAnswer = fc
  .tuple(
    fc.constantFrom(...ERROR_TYPES),
    fc.constantFrom(...ERROR_STATUSES),
    fc.constantFrom("plain", "code", ...NAMESPACES),
    fc.constantFrom("message", "Message", undefined),
    fc.option(storedItem),
  )
  .map(([type, status, form, messageKey, item]): Scenario => {
    const body: Record<string, unknown> =
      form === "plain" ? { __type: type } : form === "code" ? { code: type } : { __type: `${form}${type}` };
    if (messageKey) body[messageKey] = `what went wrong: ${type}`;
    if (item && type === "ConditionalCheckFailedException") body.Item = item;
    return {
      operation: "PutItem",
      answer: { status, body: JSON.stringify(body) },
      notes: [`type:${type}`, `status:${status}`],
    };
  });

/** Answers with no readable error type: a JSON object without one, or no JSON object at all. */
const oddAnswer = fc
  .tuple(
    fc.constantFrom(200, ...ERROR_STATUSES),
    fc.constantFrom(
      '{"message":"no type"}',
      "{}",
      "",
      "null",
      "[]",
      '"text"',
      "<html><body>502 Bad Gateway</body></html>",
      '{"__type":"com.amazonaws.dynamodb.v20120810#Throttl',
    ),
  )
  .map(([status, body]): Scenario => {
    const readable = body.startsWith("{") && body.endsWith("}");
    return {
      operation: "PutItem",
      answer: { status, body },
      notes: [`status:${status}`, readable ? "untyped" : "unreadable"],
    };
  });

const resetAnswer = fc.constant<Scenario>({ operation: "PutItem", answer: "reset", notes: ["reset"] });

const scenario = fc.oneof(
  { weight: 2, arbitrary: success },
  { weight: 5, arbitrary: errorAnswer },
  { weight: 2, arbitrary: oddAnswer },
  { weight: 1, arbitrary: resetAnswer },
);

/** How a client read one answer, in terms both clients have. */
interface Reading {
  answered: "success" | "error" | "no answer";
  /** The error type, for an answer with one. */
  type?: string;
  /** The plant in the answer (Attributes, Item, or an error's Item), if any. */
  plant?: NewPlant | "not a plant";
  /** The SDKs' retry error types: which kind of fault, and whether standard mode retries it. */
  kind?: "throttling" | "transient" | "server-error" | "client";
  retried?: boolean;
}

const inputOf = (operation: Scenario["operation"]) =>
  operation === "PutItem"
    ? {
        TableName: TABLE,
        Item: { id: { N: "1" }, name: { S: "Fern" } },
        ConditionExpression: "attribute_not_exists(id)",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const,
      }
    : { TableName: TABLE, Key: { id: { N: "1" } }, ConsistentRead: true };

const plantIn = (holder: Record<string, unknown>): Pick<Reading, "plant"> => {
  const item = holder.Attributes ?? holder.Item;
  return item === undefined ? {} : { plant: plantReadByFunction(item) };
};

async function readByFunction(client: DynamoDbClient, { operation }: Scenario): Promise<Reading> {
  try {
    return {
      answered: "success",
      ...plantIn(await client.call(operation, inputOf(operation), new AbortController().signal)),
    };
  } catch (error) {
    const reason = retryableFault(error);
    const classified = {
      kind: reason === undefined ? ("client" as const) : (reason as Reading["kind"]),
      retried: reason !== undefined,
    };
    if (!(error instanceof DynamoDbError)) return { answered: "no answer", ...classified };
    return { answered: "error", type: error.type, ...plantIn(error.body), ...classified };
  }
}

/** The SDK's retry error type, as its retry middleware decides it (getRetryErrorType). */
function sdkKind(error: Error): NonNullable<Reading["kind"]> {
  if (isThrottlingError(error as never)) return "throttling";
  if (isTransientError(error as never)) return "transient";
  if (isServerError(error as never)) return "server-error";
  return "client";
}

async function readBySdk(client: DynamoDBClient, { operation }: Scenario): Promise<Reading> {
  try {
    const output =
      operation === "PutItem"
        ? await client.send(new PutItemCommand(inputOf("PutItem") as never))
        : await client.send(new GetItemCommand(inputOf("GetItem") as never));
    const item = "Attributes" in output ? output.Attributes : "Item" in output ? output.Item : undefined;
    return { answered: "success", ...(item === undefined ? {} : { plant: plantReadBySdk(item) }) };
  } catch (caught) {
    const error = caught as Error & { $fault?: string; Item?: Record<string, unknown> };
    const kind = sdkKind(error);
    const classified = { kind, retried: kind === "throttling" || kind === "transient" };
    // A service exception has a fault side; a reset or an unparsable body is a plain Error.
    if (error.$fault === undefined) return { answered: "no answer", ...classified };
    return {
      answered: "error",
      type: error.name,
      ...(error.Item === undefined ? {} : { plant: plantReadBySdk(error.Item) }),
      ...classified,
    };
  }
}

// ---- Where they differ -----------------------------------------------------------------------------

/**
 * A difference on purpose, as a change to the SDK's reading of an answer: what the function reads instead,
 * or undefined when the difference does not apply. They apply in order, each to the last one's result.
 */
interface Difference {
  name: string;
  reason: string;
  adjust: (subject: Scenario, sdk: Reading) => Reading | undefined;
}

const statusOf = (subject: Scenario) => (subject.answer === "reset" ? 0 : subject.answer.status);
/** The status the function classifies by: a 429 as any other 4xx (the first difference). */
const classifiedStatus = (subject: Scenario) => (statusOf(subject) === 429 ? 400 : statusOf(subject));
const typeNoted = (subject: Scenario, type: string) => subject.notes.includes(`type:${type}`);

/** The SDK's classification of an error type at a status, with no trait of its model. */
function sdkKindOf(type: string, status: number): Pick<Reading, "kind" | "retried"> {
  return classifiedAs(
    sdkKind(Object.assign(new Error(), { name: type, $metadata: { httpStatusCode: status } })),
  );
}

function classifiedAs(kind: NonNullable<Reading["kind"]>): Pick<Reading, "kind" | "retried"> {
  return { kind, retried: kind === "throttling" || kind === "transient" };
}

const DIFFERENCES: Difference[] = [
  {
    name: "a 429 is a throttle only when its type says so",
    reason:
      "DynamoDB throttles with a 400 and a throttling type, never with a 429; the SDK takes any 429 as a throttle, the function goes by the type",
    adjust: (subject, sdk) =>
      statusOf(subject) === 429 && sdk.answered === "error" && sdk.type !== undefined
        ? {
            ...sdk,
            // Without its 429, the SDK's kind is its type's: a ReplicatedWriteConflictException carries the
            // model's retryable trait, which the SDK counts as transient.
            ...(sdk.type === "ReplicatedWriteConflictException"
              ? classifiedAs("transient")
              : sdkKindOf(sdk.type, classifiedStatus(subject))),
          }
        : undefined,
  },
  {
    name: "TransactionConflictException is a throttle",
    reason:
      "DynamoDB's error table says to retry it (the item is in an ongoing transaction); the SDK's list of throttling codes leaves it out",
    adjust: (subject, sdk) =>
      typeNoted(subject, "TransactionConflictException")
        ? { ...sdk, ...classifiedAs("throttling") }
        : undefined,
  },
  {
    name: "LimitExceededException is not a throttle",
    reason:
      "DynamoDB sends it for too many control-plane operations at once (CreateTable, UpdateTable), never for the function's PutItem and GetItem; the SDK's list of throttling codes serves every service",
    adjust: (subject, sdk) =>
      typeNoted(subject, "LimitExceededException")
        ? { ...sdk, ...sdkKindOf("AnotherType", classifiedStatus(subject)) }
        : undefined,
  },
  {
    name: "a 5xx beyond 500/502/503/504 is retried",
    reason:
      "both call it a server error; the SDK's standard mode no longer retries that kind, the function retries it at the quota's lower cost, within its deadline",
    adjust: (_subject, sdk) => (sdk.kind === "server-error" ? { ...sdk, retried: true } : undefined),
  },
  {
    name: "a body that is no JSON object is a transient fault",
    reason:
      "it is not DynamoDB's answer (a proxy's page, a cut body): the function retries it within its deadline at any status; the SDK fails on it unless the status is a 5xx, and reads `null` as an empty success",
    adjust: (subject) =>
      subject.notes.includes("unreadable")
        ? { answered: "no answer", ...classifiedAs("transient") }
        : undefined,
  },
  {
    name: "an error with no type",
    reason: "named UnknownError by the function and Unknown by the SDK: only a name in logs and traces",
    adjust: (_subject, sdk) => (sdk.type === "Unknown" ? { ...sdk, type: "UnknownError" } : undefined),
  },
];

/** The SDK's reading with every applicable difference applied, and the differences that changed it. */
function intendedReading(subject: Scenario, sdk: Reading): { reading: Reading; applied: string[] } {
  let reading = sdk;
  const applied: string[] = [];
  for (const difference of DIFFERENCES) {
    const adjusted = difference.adjust(subject, reading);
    if (adjusted === undefined || isDeepStrictEqual(adjusted, reading)) continue;
    reading = adjusted;
    applied.push(difference.name);
  }
  return { reading, applied };
}

// ---- The test ----------------------------------------------------------------------------------------

let server: ReplayedAnswerServer;
let ours: DynamoDbClient;
let sdk: DynamoDBClient;

beforeAll(async () => {
  server = await startReplayedAnswerServer();
  ours = createDynamoDbClient({ ...IDENTITY, endpoint: server.url });
  sdk = new DynamoDBClient({ ...IDENTITY, endpoint: server.url, maxAttempts: 1 });
});

afterAll(async () => {
  sdk.destroy();
  await server.close();
});

describe("the same raw answers, read by the function's client and by the AWS SDK's", () => {
  test(
    `a corpus of ${ANSWER_RUNS} answers from seed ${SEED}`,
    async () => {
      const unlisted: string[] = [];
      const used = new Map<string, number>();
      const agreed = { success: 0, error: 0, "no answer": 0, plants: 0 };
      for (const subject of fc.sample(scenario, { numRuns: ANSWER_RUNS, seed: SEED })) {
        server.answerWith(subject.answer);
        const byFunction = await readByFunction(ours, subject);
        const bySdk = await readBySdk(sdk, subject);
        const { reading, applied } = intendedReading(subject, bySdk);
        if (!isDeepStrictEqual(byFunction, reading)) {
          unlisted.push(
            `${JSON.stringify(subject.answer)}: function ${JSON.stringify(byFunction, bigints)}, SDK ${JSON.stringify(bySdk, bigints)}${applied.length ? `, as intended (${applied.join("; ")}) ${JSON.stringify(reading, bigints)}` : ""}`,
          );
          continue;
        }
        for (const name of applied) used.set(name, (used.get(name) ?? 0) + 1);
        agreed[byFunction.answered]++;
        if (byFunction.plant !== undefined && byFunction.plant !== "not a plant") agreed.plants++;
      }
      expect(unlisted.slice(0, 10), `${unlisted.length} disagreements on no list`).toEqual([]);
      const unneeded = DIFFERENCES.filter(({ name }) => !used.has(name)).map(({ name }) => name);
      expect(unneeded, `entries no answer needed (needed: ${JSON.stringify([...used])})`).toEqual([]);
      expect(agreed.success).toBeGreaterThan(ANSWER_RUNS / 10);
      expect(agreed.error).toBeGreaterThan(ANSWER_RUNS / 5);
      expect(agreed["no answer"]).toBeGreaterThan(0);
      expect(agreed.plants).toBeGreaterThan(ANSWER_RUNS / 20);
    },
    fuzzTimeoutMs(ANSWER_RUNS, 100),
  );
});

function bigints(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? `${value}n` : value;
}
