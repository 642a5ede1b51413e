/**
 * The warm handler's CPU cost per valid create, beside the warm floor's (bench/warm-floor.ts) and the
 * warm floor's with the API's duties (bench/floor-with-duties.ts): all in one child process (see
 * `measureWarmCpu`), the key set fetched once, each PutItem sent to the harness's store (dynalite, in
 * the parent process, so that its CPU is not counted) on an open connection, blocks of the three
 * interleaved. All run from their bundles (bench/bundles.ts), the handler's as it ships: not from the
 * sources through tsx, whose transform keeps every function's name with a call per closure made, a cost
 * the deployed code does not have.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Handler } from "../lambda/http/create-handler.ts";
import { apiGatewayEvent } from "../support/events.ts";
import { runNodeForJson, typeScriptChild } from "./child-process.ts";
import type { FloorHandler } from "./floor-handlers.ts";
import { type Summary, summarize } from "./stats.ts";

const BLOCK_SIZE = 250;
const WARM_UP_CALLS = 500;

export interface WarmCpuResult {
  /** CPU µs (user + system, all threads) per create, one sample per block of calls. */
  createCpuMicros: Summary;
  /** CPU µs per call of the warm floor, blocks interleaved with the creates'. */
  floorCpuMicros: Summary;
  /** CPU µs per call of the warm floor with the API's duties, blocks interleaved with the others'. */
  dutiesCpuMicros: Summary;
  createWallMicros: Summary;
  floorWallMicros: Summary;
  dutiesWallMicros: Summary;
  /** Median create CPU over median floor CPU. */
  ratio: number;
  /** Median create CPU over the median CPU of the floor with duties. */
  dutiesRatio: number;
}

export interface WarmCpuSetup {
  /** The harness's configuration, for the handler and the floor alike. */
  environment: Record<string, string>;
  token: string;
  creates: number;
  /** The handler's bundle (its `handlerFor` export), the warm floor's (`warmFloor`), and the one with duties. */
  handlerPath: string;
  floorPath: string;
  dutiesFloorPath: string;
}

export async function measureWarmCpu(setup: WarmCpuSetup): Promise<WarmCpuResult> {
  return runNodeForJson<WarmCpuResult>(typeScriptChild("./warm-cpu.ts"), {
    ...setup.environment,
    BENCH_TOKEN: setup.token,
    BENCH_CPU_CREATES: String(setup.creates),
    BENCH_HANDLER_BUNDLE: setup.handlerPath,
    BENCH_WARM_FLOOR_BUNDLE: setup.floorPath,
    BENCH_DUTIES_FLOOR_BUNDLE: setup.dutiesFloorPath,
  });
}

interface BlockCost {
  cpuMicros: number;
  wallMicros: number;
}

async function costPerCall(calls: number, call: () => Promise<unknown>): Promise<BlockCost> {
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  for (let index = 0; index < calls; index++) await call();
  const wallMicros = ((performance.now() - wallBefore) * 1000) / calls;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuMicros: (cpu.user + cpu.system) / calls, wallMicros };
}

/** The log line goes to a no-op while measuring: the cost of a terminal or pipe is not the handler's. */
function silenceStdout(): () => void {
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  return () => {
    process.stdout.write = write;
  };
}

/** Answers that must be 200, each for a create of a new id: every call is a real write. */
function creating(
  answer: (event: ReturnType<typeof apiGatewayEvent>) => Promise<{ statusCode: number; body?: string }>,
  token: string,
  ids: { next: number },
): () => Promise<void> {
  const template = apiGatewayEvent("2.0", { token });
  return async () => {
    const event = { ...template, body: `{"id":${ids.next++},"name":"Fern","tag":"bench"}` };
    const result = await answer(event);
    if (result.statusCode !== 200) throw new Error(`create answered ${result.statusCode}: ${result.body}`);
  };
}

async function main(): Promise<void> {
  const token = process.env.BENCH_TOKEN ?? "";
  const blocks = Math.max(1, Math.round(Number(process.env.BENCH_CPU_CREATES) / BLOCK_SIZE));
  const ids = { next: Date.now() * 1000 };
  const { handlerFor } = (await importBundle("BENCH_HANDLER_BUNDLE")) as {
    handlerFor: (env: NodeJS.ProcessEnv) => Handler;
  };
  const { warmFloor } = (await importBundle("BENCH_WARM_FLOOR_BUNDLE")) as { warmFloor: () => FloorHandler };
  const { warmFloorWithDuties } = (await importBundle("BENCH_DUTIES_FLOOR_BUNDLE")) as {
    warmFloorWithDuties: () => FloorHandler;
  };
  const handler = handlerFor(process.env);
  const subjects = [
    creating((event) => handler(event), token, ids),
    creating(warmFloor(), token, ids),
    creating(warmFloorWithDuties(), token, ids),
  ];

  const restoreStdout = silenceStdout();
  const costs: BlockCost[][] = subjects.map(() => []);
  try {
    // The first call of each fetches the key set and opens the store's connection.
    for (const subject of subjects) await costPerCall(WARM_UP_CALLS, subject);
    for (let block = 0; block < blocks; block++) {
      for (const [index, subject] of subjects.entries()) {
        costs[index]?.push(await costPerCall(BLOCK_SIZE, subject));
      }
    }
  } finally {
    restoreStdout();
  }
  const [create = [], floor = [], duties = []] = costs;
  const cpu = (blockCosts: BlockCost[]) => summarize(blockCosts.map((cost) => cost.cpuMicros));
  const wall = (blockCosts: BlockCost[]) => summarize(blockCosts.map((cost) => cost.wallMicros));
  const createCpuMicros = cpu(create);
  const floorCpuMicros = cpu(floor);
  const dutiesCpuMicros = cpu(duties);
  const result: WarmCpuResult = {
    createCpuMicros,
    floorCpuMicros,
    dutiesCpuMicros,
    createWallMicros: wall(create),
    floorWallMicros: wall(floor),
    dutiesWallMicros: wall(duties),
    ratio: createCpuMicros.median / floorCpuMicros.median,
    dutiesRatio: createCpuMicros.median / dutiesCpuMicros.median,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function importBundle(variable: string): Promise<unknown> {
  const path = process.env[variable];
  if (!path) throw new Error(`${variable} must name a bundle`);
  return import(pathToFileURL(path).href);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
