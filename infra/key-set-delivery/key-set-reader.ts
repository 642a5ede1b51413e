/**
 * The function behind the DeliveredKeySet custom resource (infra/delivered-key-set.ts): on Create and
 * Update it reads the issuer's key set and answers CloudFormation with what the handler's JWKS_JSON is to
 * hold; on Delete it only answers. Bundled at synth into the template's inline code (CommonJS, Node 24).
 *
 * It never answers FAILED. CloudFormation rolls an update back by sending Update again with the old
 * properties; a reader that failed on what the issuer publishes would fail that too and leave the stack in
 * UPDATE_ROLLBACK_FAILED. So whatever goes wrong (issuer unreachable, a refused or oversize set) delivers
 * nothing, says why in the Summary attribute (a stack output) and the log, and the handler reads the key
 * set from the issuer at cold start, as it does without delivery.
 */
import { createHash } from "node:crypto";
import {
  deliverableKeySet,
  environmentValueBytes,
  KeySetRefusedError,
  keyCount,
  keysLeftOutNote,
} from "./public-key-set.ts";

/** The custom resource's properties, as the construct sets them. */
export const READER_PROPERTIES = {
  /** Where the issuer publishes its key set (https). */
  jwksUrl: "JwksUrl",
  /** The bytes left for JWKS_JSON in the handler's environment, measured at synth. */
  environmentBudget: "EnvironmentBudgetBytes",
  /** Changes with every synth, so that every deploy reads the key set again. */
  synthesis: "Synthesis",
} as const;

/** The attributes it answers with (Fn::GetAtt). */
export const READER_ATTRIBUTES = {
  /** The compact key set for JWKS_JSON, or "" when none is delivered. */
  keySet: "KeySet",
  /** `sha256:<first 16 hex digits>` of KeySet, or "none": the published version's description. */
  digest: "Digest",
  /** One line for the operator: what was delivered, or why nothing was. */
  summary: "Summary",
} as const;

/** A custom resource's answer body may hold at most 4096 bytes (AWS CloudFormation User Guide, custom resources). */
export const RESPONSE_LIMIT_BYTES = 4096;

const ATTEMPTS = 4;
const ATTEMPT_TIMEOUT_MS = 5_000;
/** Waits between attempts: a pool created a moment ago may not publish its keys yet. */
const BACKOFF_MS = [1_000, 2_000, 4_000];
const RESPONSE_BACKOFF_MS = 1_000;
/** The largest key-set document read: far above any issuer's, far below the reader's memory. */
const MAX_DOCUMENT_BYTES = 1_000_000;
const RESPONSE_ATTEMPTS = 3;
const RESPONSE_TIMEOUT_MS = 10_000;
/**
 * Every wait and timeout above, summed: the reader's Lambda timeout must exceed it, so that it always
 * answers CloudFormation before Lambda stops it.
 */
export const WORST_CASE_RUN_MS =
  ATTEMPTS * ATTEMPT_TIMEOUT_MS +
  BACKOFF_MS.reduce((sum, ms) => sum + ms, 0) +
  RESPONSE_ATTEMPTS * RESPONSE_TIMEOUT_MS +
  (RESPONSE_ATTEMPTS - 1) * RESPONSE_BACKOFF_MS;

/** What CloudFormation sends a custom resource's function (the members this reader uses). */
export interface CustomResourceEvent {
  RequestType: "Create" | "Update" | "Delete";
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  PhysicalResourceId?: string;
  ResourceProperties: Record<string, unknown>;
}

export interface ReaderDependencies {
  wait(ms: number): Promise<void>;
  log(line: string): void;
}

interface Outcome {
  keySet: string;
  summary: string;
}

/** The handler, with its waits and log given (tests pass a wait that returns at once and record it). */
export function createKeySetReader(dependencies: ReaderDependencies) {
  return async (event: CustomResourceEvent): Promise<void> => {
    const outcome: Outcome =
      event.RequestType === "Delete"
        ? { keySet: "", summary: "deleted" }
        : await readDeliverable(event.ResourceProperties, dependencies);
    dependencies.log(`${event.RequestType}: ${outcome.summary}`);
    await answer(event, outcome, dependencies);
  };
}

export const handler = createKeySetReader({
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  log: (line) => console.log(line),
});

async function readDeliverable(
  properties: Record<string, unknown>,
  dependencies: ReaderDependencies,
): Promise<Outcome> {
  const url = String(properties[READER_PROPERTIES.jwksUrl] ?? "");
  const budget = Number(properties[READER_PROPERTIES.environmentBudget]);
  try {
    if (!URL.canParse(url)) throw new KeySetRefusedError(`"${url}" is not a URL`);
    if (!Number.isSafeInteger(budget) || budget < 0) {
      throw new KeySetRefusedError(`the environment budget "${String(budget)}" is not a number of bytes`);
    }
    const keySet = deliverableKeySet(parseJson(await download(url, dependencies)));
    const bytes = environmentValueBytes(keySet);
    if (bytes > budget) {
      throw new KeySetRefusedError(
        `it takes ${bytes} bytes in the environment and ${budget} are left (Lambda's 4 KB, less the ` +
          "function's other variables)",
      );
    }
    return {
      keySet,
      summary: `${keyCount(keySet)} keys delivered from ${url} (${bytes} bytes; ${budget} were left)${keysLeftOutNote(keySet)}`,
    };
  } catch (error) {
    const reason = error instanceof KeySetRefusedError ? error.message : `unexpected error: ${String(error)}`;
    return { keySet: "", summary: nothingDelivered(url, reason) };
  }
}

function nothingDelivered(url: string, reason: string): string {
  return `none delivered (${url}: ${reason}); new instances read the key set from the issuer at cold start`;
}

/** GET `url`, ATTEMPTS times at most; anything but a 200 after the last is a refusal. */
async function download(url: string, { wait }: ReaderDependencies): Promise<string> {
  let lastProblem = "";
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const response = await fetch(url, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      if (response.status === 200) return await cappedText(response);
      await response.body?.cancel();
      lastProblem = `answered ${response.status}`;
    } catch (error) {
      if (error instanceof KeySetRefusedError) throw error;
      lastProblem = describeFetchError(error);
    }
    const backoff = BACKOFF_MS[attempt - 1];
    if (attempt < ATTEMPTS && backoff !== undefined) await wait(backoff);
  }
  throw new KeySetRefusedError(`no key set after ${ATTEMPTS} attempts, the last ${lastProblem}`);
}

async function cappedText(response: Response): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString("utf8");
    total += value.byteLength;
    if (total > MAX_DOCUMENT_BYTES) {
      await reader.cancel().catch(() => {});
      throw new KeySetRefusedError(`the answer exceeds ${MAX_DOCUMENT_BYTES} bytes`);
    }
    chunks.push(value);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new KeySetRefusedError("the answer is not JSON");
  }
}

/** fetch's own message is "fetch failed"; what happened is in its cause (ECONNREFUSED, a timeout). */
function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return `timed out after ${ATTEMPT_TIMEOUT_MS} ms`;
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return `failed: ${code ?? cause.message}`;
  }
  return `failed: ${error.message}`;
}

/**
 * The answer CloudFormation waits for: a PUT of the result to the request's pre-signed ResponseURL, always
 * SUCCESS (see the file's comment). An answer that would exceed RESPONSE_LIMIT_BYTES delivers nothing.
 */
async function answer(event: CustomResourceEvent, outcome: Outcome, dependencies: ReaderDependencies) {
  let body = responseBody(event, outcome);
  if (Buffer.byteLength(body, "utf8") > RESPONSE_LIMIT_BYTES) {
    const url = String(event.ResourceProperties[READER_PROPERTIES.jwksUrl] ?? "");
    const reason = `the answer to CloudFormation would exceed its ${RESPONSE_LIMIT_BYTES}-byte limit`;
    const smaller = { keySet: "", summary: nothingDelivered(url, reason) };
    dependencies.log(`${event.RequestType}: ${smaller.summary}`);
    body = responseBody(event, smaller);
  }
  let lastProblem = "";
  for (let attempt = 1; attempt <= RESPONSE_ATTEMPTS; attempt++) {
    try {
      const response = await fetch(event.ResponseURL, {
        method: "PUT",
        // The pre-signed URL signs no content type; cfn-response sends an empty one too.
        headers: { "content-type": "" },
        body,
        signal: AbortSignal.timeout(RESPONSE_TIMEOUT_MS),
      });
      await response.body?.cancel();
      if (response.ok) return;
      lastProblem = `answered ${response.status}`;
    } catch (error) {
      lastProblem = describeFetchError(error);
    }
    if (attempt < RESPONSE_ATTEMPTS) await dependencies.wait(RESPONSE_BACKOFF_MS);
  }
  // The pre-signed URL is a credential: only its host is named.
  throw new Error(`could not answer CloudFormation at ${new URL(event.ResponseURL).host}: ${lastProblem}`);
}

function responseBody(event: CustomResourceEvent, { keySet, summary }: Outcome): string {
  return JSON.stringify({
    Status: "SUCCESS",
    PhysicalResourceId: event.PhysicalResourceId ?? `${event.LogicalResourceId}-${event.RequestId}`,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: {
      [READER_ATTRIBUTES.keySet]: keySet,
      [READER_ATTRIBUTES.digest]: keySet === "" ? "none" : `sha256:${sha256Prefix(keySet)}`,
      [READER_ATTRIBUTES.summary]: summary,
    },
  });
}

function sha256Prefix(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}
