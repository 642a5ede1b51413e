/**
 * The whole local path under concurrent load (HTTP bridge, bundled handler, token check, signed
 * PutItem, dynalite), beside the same number of raw PutItem calls to dynalite alone: what the path
 * adds over the store. Both stores keep their data in LevelDB on disk, each in a fresh folder.
 */
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { signedDynamoDbHeaders } from "../lambda/store/dynamodb-client.ts";
import { putIfAbsentInput } from "../lambda/store/dynamodb-plant-store.ts";
import { LOCAL_IDENTITY } from "../local/dynamodb.ts";
import { DEFAULT_TABLE_NAME } from "../local/local-settings.ts";
import { profilingArguments } from "./child-process.ts";
import type { LoadTargetAddress, LoadTargetKind } from "./load-target.ts";
import { type Summary, summarize } from "./stats.ts";

export interface LoadSettings {
  connections: number;
  /** How long the local path is loaded; the raw store then gets as many calls as it completed. */
  seconds: number;
  warmUpSeconds: number;
}

export interface LoadResult {
  creates: number;
  createsPerSecond: number;
  /** Per-request latency in ms, as autocannon timed it. */
  latency: Summary;
}

export interface LocalLoadResult {
  localPath: LoadResult;
  rawStore: LoadResult;
  /** Raw PutItem calls per second over local creates per second: the time the path adds, as a factor. */
  ratio: number;
  latencyRatio: number;
}

const PLANT = { name: "Fern", tag: "bench" };

export async function measureLocalLoad(settings: LoadSettings): Promise<LocalLoadResult> {
  const dataRoot = await mkdtemp(join(tmpdir(), "plant-store-bench-"));
  try {
    const localPath = await withLoadTarget("local-api", join(dataRoot, "local-api"), async (address) => {
      const target = {
        name: "the local API",
        url: address.url,
        headers: localApiHeaders(address.token ?? ""),
        body: createBody,
      };
      await runLoad(target, settings.connections, { duration: settings.warmUpSeconds });
      return runLoad(target, settings.connections, { duration: settings.seconds });
    });
    const rawStore = await withLoadTarget("dynalite", join(dataRoot, "raw-store"), async (address) => {
      const target = {
        name: "raw dynalite",
        url: address.url,
        headers: await putItemHeaders(address.url),
        body: putItemBody,
      };
      await runLoad(target, settings.connections, { duration: settings.warmUpSeconds });
      return runLoad(target, settings.connections, { amount: localPath.creates });
    });
    return {
      localPath,
      rawStore,
      ratio: rawStore.createsPerSecond / localPath.createsPerSecond,
      latencyRatio: localPath.latency.median / rawStore.latency.median,
    };
  } finally {
    await rm(dataRoot, { recursive: true, force: true });
  }
}

function createBody(id: number): string {
  return JSON.stringify({ id, ...PLANT });
}

/** The PutItem the handler sends for the same create. */
function putItemBody(id: number): string {
  return JSON.stringify(putIfAbsentInput(DEFAULT_TABLE_NAME, { id: BigInt(id), ...PLANT }));
}

function localApiHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, "content-type": "application/json" };
}

/**
 * Headers signed once and replayed with every body: dynalite checks that a request is signed but not
 * the signature, so the raw baseline does not pay for SigV4 per call (the handler does, in its path).
 */
async function putItemHeaders(endpoint: string): Promise<Record<string, string>> {
  const { "content-length": _lengthOfTheSignedBody, ...headers } = await signedDynamoDbHeaders(
    new URL(endpoint),
    LOCAL_IDENTITY,
    "PutItem",
    putItemBody(0),
  );
  return headers; // autocannon sets each body's own Content-Length
}

interface LoadTarget {
  /** Which side of the comparison, for the error message. */
  name: string;
  url: string;
  headers: Record<string, string>;
  body: (id: number) => string;
}

let lastId = 0;

/** Every request carries a fresh id, so each one is a real write. Any non-2xx answer fails the run. */
async function runLoad(
  target: LoadTarget,
  connections: number,
  bound: { duration: number } | { amount: number },
): Promise<LoadResult> {
  const latencies: number[] = [];
  const failures = new Map<number, number>();
  const startedAt = performance.now();
  const instance = autocannon({
    url: target.url,
    connections,
    timeout: 10,
    ...bound,
    requests: [
      {
        method: "POST",
        headers: target.headers,
        setupRequest: (request) => ({ ...request, body: target.body(++lastId) }),
      },
    ],
  });
  instance.on("response", (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else failures.set(status, (failures.get(status) ?? 0) + 1);
  });
  const result = await instance;
  const seconds = (performance.now() - startedAt) / 1000;
  if (failures.size > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `load on ${target.name} (${target.url}) failed: statuses ${JSON.stringify(Object.fromEntries(failures))}, ` +
        `${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return {
    creates: latencies.length,
    createsPerSecond: latencies.length / seconds,
    latency: summarize(latencies),
  };
}

async function withLoadTarget<T>(
  kind: LoadTargetKind,
  dataDir: string,
  use: (address: LoadTargetAddress) => Promise<T>,
): Promise<T> {
  const script = fileURLToPath(new URL("./load-target.ts", import.meta.url));
  // stdout (the request log lines) goes to /dev/null, as a quiet terminal would cost next to nothing.
  const child = fork(script, [kind, dataDir], {
    execArgv: ["--import", "tsx", ...profilingArguments()],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  try {
    return await use(await addressOf(child));
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      if (child.connected) child.send("close");
      else child.kill();
      const killTimer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killTimer);
    }
  }
}

function addressOf(child: ChildProcess): Promise<LoadTargetAddress> {
  return new Promise((resolve, reject) => {
    child.once("message", (message) => resolve(message as LoadTargetAddress));
    child.once("exit", (code) => reject(new Error(`the load target exited (${code}) before listening`)));
  });
}
