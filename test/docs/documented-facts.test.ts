/**
 * The numbers and names README.md, openapi/openapi.yaml and docs/DEPLOY.md state, checked against the
 * values the code uses. One row per fact: the code's value, and for each document the phrases that state
 * it. Every phrase must still be found (a reworded sentence is updated here, not silently dropped), and
 * every value it states must be the code's. Whitespace is collapsed first, so rewrapping a line is free.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTEXT_DEFAULTS } from "../../infra/config.ts";
import { FUNCTION_TIMEOUT } from "../../infra/plant-store-stack.ts";
import { CLOCK_SKEW_SECONDS, KEY_SET_REFETCH_INTERVAL_SECONDS } from "../../lambda/auth/issuer-keys.ts";
import {
  MAX_KEYS_IN_KEY_SET,
  MAX_RSA_MODULUS_BITS,
  MAX_RSA_PUBLIC_EXPONENT_BITS,
  MIN_RSA_MODULUS_BITS,
} from "../../lambda/auth/key-set.ts";
import {
  DEFAULT_REQUIRED_SCOPE,
  DEFAULT_STORE_ATTEMPT_TIMEOUT_MS,
  DEFAULT_STORE_DEADLINE_MS,
  DEFAULT_STORE_MAX_ATTEMPTS,
} from "../../lambda/defaults.ts";
import { MAX_BODY_BYTES } from "../../lambda/request/request-body.ts";
import { STORE_RETRY_AFTER_SECONDS } from "../../lambda/store/dynamodb-plant-store.ts";
import { DEFAULT_PORT } from "../../local/local-settings.ts";

/** The documents a user reads for these facts; the README links docs/LOCAL.md for the local run's detail. */
const DOCUMENTS = ["README.md", "openapi/openapi.yaml", "docs/DEPLOY.md", "docs/LOCAL.md"] as const;
type DocumentPath = (typeof DOCUMENTS)[number];

/** A number as written: `3`, `0.5`, `16384`, `16,384`. */
const N = Symbol("number");
/** A name as written between quotes or backticks, or up to the next space: `plants/write`. */
const NAME = Symbol("name");
type Hole = typeof N | typeof NAME;

/** Words that state a value; matched against the document with its whitespace collapsed. */
interface Statement {
  readonly pattern: RegExp;
  /** The words as written here, holes shown as N and NAME: the test's title. */
  readonly words: string;
  /** The fact's units in one stated unit: 1000 for seconds stated of a value in milliseconds, 1024 for KiB. */
  readonly unit?: number;
}

/** A statement: literal text with holes where the value stands. */
function says(literal: TemplateStringsArray, ...holes: Hole[]): Statement {
  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const capture = (hole: Hole) => (hole === N ? String.raw`(\d[\d,]*(?:\.\d+)?)` : String.raw`([^\s\`'"]+)`);
  const join = (show: (part: string) => string, hole: (hole: Hole) => string) =>
    literal.map((part, index) => show(part) + (holes[index] ? hole(holes[index]) : "")).join("");
  return {
    pattern: new RegExp(join(escapeRegExp, capture), "g"),
    words: join(
      (part) => part,
      (hole) => (hole === N ? "N" : "NAME"),
    ),
  };
}

interface DocumentedFact {
  readonly fact: string;
  /** The value the code uses. */
  readonly value: number | string;
  /** Where each document states it today; a document absent here does not state it. */
  readonly statedIn: Partial<Record<DocumentPath, readonly Statement[]>>;
}

const seconds = (statement: Statement): Statement => ({ ...statement, unit: 1000 });
const kib = (statement: Statement): Statement => ({ ...statement, unit: 1024 });

const FACTS: readonly DocumentedFact[] = [
  {
    fact: "the store deadline (ms)",
    value: DEFAULT_STORE_DEADLINE_MS,
    statedIn: {
      "docs/LOCAL.md": [seconds(says`own ${N} s store deadline`)],
      "openapi/openapi.yaml": [seconds(says`a ${N} s deadline`)],
      "docs/DEPLOY.md": [
        says`at most \`STORE_DEADLINE_MS\` (${N} ms)`,
        says`\`STORE_DEADLINE_MS\` | no | time spent on the store, retries included, before answering 503; default ${N}`,
      ],
    },
  },
  {
    fact: "the time one store call may take (ms)",
    value: DEFAULT_STORE_ATTEMPT_TIMEOUT_MS,
    statedIn: { "docs/DEPLOY.md": [says`time one store call may take; default ${N}`] },
  },
  {
    fact: "the store calls per request",
    value: DEFAULT_STORE_MAX_ATTEMPTS,
    statedIn: {
      "docs/DEPLOY.md": [says`store calls per request, the first included; default ${N}`],
      "openapi/openapi.yaml": [says`at most ${N} calls per request`],
    },
  },
  {
    fact: "the key set's refetch window (s)",
    value: KEY_SET_REFETCH_INTERVAL_SECONDS,
    statedIn: {
      "openapi/openapi.yaml": [says`at most one fetch per ${N} s`],
    },
  },
  {
    fact: "the most keys a key set may hold",
    value: MAX_KEYS_IN_KEY_SET,
    statedIn: {
      "openapi/openapi.yaml": [
        says`more than ${N} keys), is a 503`,
        says`at most the ${N} keys of one key set`,
      ],
    },
  },
  {
    fact: "the smallest RSA modulus trusted (bits)",
    value: MIN_RSA_MODULUS_BITS,
    statedIn: { "openapi/openapi.yaml": [says`an RSA modulus under ${N} bits`] },
  },
  {
    fact: "the largest RSA modulus trusted (bits)",
    value: MAX_RSA_MODULUS_BITS,
    statedIn: { "openapi/openapi.yaml": [says`or over ${N} (each forged token`] },
  },
  {
    fact: "the largest RSA public exponent trusted (bits)",
    value: MAX_RSA_PUBLIC_EXPONENT_BITS,
    statedIn: { "openapi/openapi.yaml": [says`1, or over ${N} bits (issuers use 65537`] },
  },
  {
    fact: "the longest Retry-After of an issuer fault (s): the refetch window",
    value: KEY_SET_REFETCH_INTERVAL_SECONDS,
    statedIn: {
      "openapi/openapi.yaml": [says`until its key set may be fetched again, 1 to ${N}`],
    },
  },
  {
    fact: "the Retry-After of a store fault (s)",
    value: STORE_RETRY_AFTER_SECONDS,
    statedIn: { "openapi/openapi.yaml": [says`Seconds to wait before retrying: ${N} when the store failed`] },
  },
  {
    fact: "the body limit (bytes)",
    value: MAX_BODY_BYTES,
    statedIn: {
      "README.md": [says`the body is over ${N} bytes`, says`at most ${N} are accepted`],
      "docs/LOCAL.md": [kib(says`over ${N} KiB`), kib(says`The function's ${N} KiB limit`)],
      "openapi/openapi.yaml": [says`at most ${N} bytes`, says`larger than ${N} bytes`],
    },
  },
  {
    fact: "the clock skew allowed on exp and nbf (s)",
    value: CLOCK_SKEW_SECONDS,
    statedIn: { "openapi/openapi.yaml": [says`${N} s of clock skew`] },
  },
  {
    fact: "the required scope",
    value: DEFAULT_REQUIRED_SCOPE,
    statedIn: {
      "README.md": [says`the scope \`${NAME}\``, says`the scope '${NAME}'`],
      "docs/LOCAL.md": [
        says`scope \`${NAME}\`, valid for one hour`,
        says`space-separated scopes instead of \`${NAME}\``,
      ],
      "openapi/openapi.yaml": [says`carrying the scope \`${NAME}\``, says`lacks the scope \`${NAME}\``],
      "docs/DEPLOY.md": [
        says`scope \`${NAME}\`)`,
        says`-d scope=${NAME} `,
        says`| \`requiredScope\` | \`${NAME}\` |`,
        says`\`REQUIRED_SCOPE\` | no | default \`${NAME}\``,
      ],
    },
  },
  {
    fact: "the required scope, as Cognito's resource server and scope name",
    value: DEFAULT_REQUIRED_SCOPE.split("/").join(" "),
    statedIn: { "docs/DEPLOY.md": [says`a resource server \`${NAME}\` with the scope \`${NAME}\``] },
  },
  {
    fact: "the default function memory (MB)",
    value: CONTEXT_DEFAULTS.memorySize,
    statedIn: {
      "docs/DEPLOY.md": [
        says`| \`memorySize\` | \`${N}\` |`,
        // The cost per create is worked out at the default memory: its table's heading and its GB.
        says`${N} MB: | Item | Per million creates |`,
        { ...says`X/1000 s × ${N} GB ×`, unit: 1024 },
      ],
    },
  },
  {
    fact: "the function timeout (s)",
    value: FUNCTION_TIMEOUT.toSeconds(),
    statedIn: {
      "docs/LOCAL.md": [says`the function's ${N} s timeout`],
      "docs/DEPLOY.md": [says`function timeout **${N} s**`, says`${N} s leaves room`],
    },
  },
  {
    fact: "the stage's default rate limit (requests per second)",
    value: CONTEXT_DEFAULTS.throttleRateLimit,
    statedIn: {
      "docs/LOCAL.md": [says`by default ${N} requests/s`],
      "docs/DEPLOY.md": [says`(${N} requests per second`, says`| \`throttleRateLimit\` | \`${N}\` |`],
    },
  },
  {
    fact: "the stage's default burst",
    value: CONTEXT_DEFAULTS.throttleBurstLimit,
    statedIn: {
      "docs/LOCAL.md": [says`requests/s, burst ${N}`],
      "docs/DEPLOY.md": [says`bursts of ${N})`, says`| \`throttleBurstLimit\` | \`${N}\` |`],
    },
  },
  {
    fact: "the local run's default port",
    value: DEFAULT_PORT,
    statedIn: {
      "README.md": [says`http://127.0.0.1:${N}/`, says`| \`PORT\` | \`${N}\` |`],
      "openapi/openapi.yaml": [says`default: http://127.0.0.1:${N}`],
    },
  },
];

const documentText = new Map(
  DOCUMENTS.map((path) => [
    path,
    readFileSync(new URL(`../../${path}`, import.meta.url), "utf8").replace(/\s+/g, " "),
  ]),
);

/** Every value `statement` states in `text`, in the fact's units: numbers as numbers, names as written. */
function statedValues(
  text: string,
  { pattern, unit = 1 }: Statement,
  value: number | string,
): (number | string)[] {
  return [...text.matchAll(pattern)].map((match) => {
    const captured = match.slice(1);
    return typeof value === "number" ? Number(captured[0]?.replaceAll(",", "")) * unit : captured.join(" ");
  });
}

const rows = FACTS.flatMap(({ fact, value, statedIn }) =>
  Object.entries(statedIn).flatMap(([document, statements]) =>
    statements.map((statement) => ({
      fact,
      value,
      document: document as DocumentPath,
      statement,
      words: statement.words,
    })),
  ),
);

describe("what the documents state is what the code does", () => {
  it.each(rows)("$document: $fact, stated as $words", (row) => {
    const stated = statedValues(documentText.get(row.document) ?? "", row.statement, row.value);
    expect(
      stated.length,
      `${row.document} no longer says "${row.words}"; where it states ${row.fact} now, say so in FACTS`,
    ).toBeGreaterThan(0);
    expect(stated, `${row.document} states ${row.fact} wrongly`).toEqual(stated.map(() => row.value));
  });
});

describe("the check itself", () => {
  const deadline = seconds(says`inside a ${N} s deadline`);
  const stating = (stated: number) => `retried inside a ${stated} s deadline, with backoff`;

  it("catches a document that states another number than the code's", () => {
    const documented = DEFAULT_STORE_DEADLINE_MS / 1000;
    expect(statedValues(stating(documented), deadline, DEFAULT_STORE_DEADLINE_MS)).toEqual([
      DEFAULT_STORE_DEADLINE_MS,
    ]);
    expect(statedValues(stating(documented + 2), deadline, DEFAULT_STORE_DEADLINE_MS)).not.toEqual([
      DEFAULT_STORE_DEADLINE_MS,
    ]);
  });

  it("reads numbers with thousands separators, and names whole", () => {
    expect(statedValues("at most 16,384 bytes", says`at most ${N} bytes`, MAX_BODY_BYTES)).toEqual([16_384]);
    expect(statedValues("the scope `plants/writes`", says`the scope \`${NAME}\``, "plants/write")).toEqual([
      "plants/writes",
    ]);
  });
});

describe("one definition per fact in the code", () => {
  const sources = ["lambda", "infra", "local"].flatMap((folder) =>
    readdirSync(new URL(`../../${folder}`, import.meta.url), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((path) => ({
        path: `${folder}/${path}`,
        text: readFileSync(new URL(`../../${folder}/${path}`, import.meta.url), "utf8"),
      })),
  );
  const spelledIn = (spelling: string) =>
    sources.filter(({ text }) => text.includes(spelling)).map(({ path }) => path);

  it("spells the required scope only in lambda/defaults.ts", () => {
    expect(spelledIn(`"${DEFAULT_REQUIRED_SCOPE}"`)).toEqual(["lambda/defaults.ts"]);
  });

  it("spells DynamoDB's table-name rule only in lambda/config.ts", () => {
    expect(spelledIn("{3,255}")).toEqual(["lambda/config.ts"]);
  });
});

describe("the README's local run", () => {
  const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
  const section = read("README.md").split("## Run it locally")[1]?.split("\n## ")[0] ?? "";

  it("lists as its variables the ones local/local-settings.ts reads", () => {
    const readByCode = [...read("local/local-settings.ts").matchAll(/\benv\.([A-Z_]+)/g)].map(
      (match) => match[1],
    );
    const listed = [...section.matchAll(/^\| `([A-Z_]+)` +\|/gm)].map((match) => match[1]);
    expect(listed.length).toBeGreaterThan(0);
    expect([...new Set(listed)].sort()).toEqual([...new Set(readByCode)].sort());
  });

  it("names every store setting `invoke` reads among those it must share with `npm start`", () => {
    const shared =
      section.replace(/\s+/g, " ").split("opens the store itself, from ")[1]?.split(":")[0] ?? "";
    const invoke = read("local/invoke.ts");
    const settings = read("local/local-settings.ts");
    const variables = [...invoke.matchAll(/(\w+From)\(process\.env\)/g)].map((match) => {
      const body = settings.split(`function ${match[1]}(`)[1]?.split("\n}")[0] ?? "";
      return /\benv\.([A-Z_]+)/.exec(body)?.[1];
    });
    expect(variables).toContain("PLANTS_TABLE");
    for (const variable of variables) expect(shared, `${variable}`).toContain(`\`${variable}\``);
  });
});
