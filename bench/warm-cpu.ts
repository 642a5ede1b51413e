/**
 * The warm handler's CPU cost per valid create, beside the cost of verifying the same token alone.
 * Run as a child (see `measureWarmCpu`): in-process, the store an in-memory fake, the key set cached.
 */
import { fileURLToPath } from "node:url";
import { createAuthenticator } from "../lambda/auth/authenticate.ts";
import { readConfig } from "../lambda/config.ts";
import { createHandler } from "../lambda/http/create-handler.ts";
import { apiGatewayEvent } from "../support/events.ts";
import { InMemoryPlantStore } from "../support/in-memory-plant-store.ts";
import { runNodeForJson, typeScriptChild } from "./child-process.ts";
import { type Summary, summarize } from "./stats.ts";

const BLOCK_SIZE = 250;
const WARM_UP_CALLS = 500;

export interface WarmCpuResult {
  /** CPU µs (user + system, all threads) per create, one sample per block of calls. */
  createCpuMicros: Summary;
  /** CPU µs per `authenticate(header)` alone, blocks interleaved with the creates'. */
  verifyCpuMicros: Summary;
  createWallMicros: Summary;
  verifyWallMicros: Summary;
  /** Median create CPU over median verification CPU. */
  ratio: number;
}

export async function measureWarmCpu(
  environment: Record<string, string>,
  token: string,
  creates: number,
): Promise<WarmCpuResult> {
  return runNodeForJson<WarmCpuResult>(typeScriptChild("./warm-cpu.ts"), {
    ...environment,
    BENCH_TOKEN: token,
    BENCH_CPU_CREATES: String(creates),
  });
}

interface BlockCost {
  cpuMicros: number;
  wallMicros: number;
}

async function costPerCall(calls: number, call: (index: number) => Promise<unknown>): Promise<BlockCost> {
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  for (let index = 0; index < calls; index++) await call(index);
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

async function main(): Promise<void> {
  const token = process.env.BENCH_TOKEN ?? "";
  const blocks = Math.max(1, Math.round(Number(process.env.BENCH_CPU_CREATES) / BLOCK_SIZE));
  const config = readConfig(process.env);
  const authenticate = createAuthenticator(config);
  const handler = createHandler({ authenticate, store: new InMemoryPlantStore() });
  const header = `Bearer ${token}`;
  const template = apiGatewayEvent("2.0", { token });
  const events = Array.from({ length: WARM_UP_CALLS + blocks * BLOCK_SIZE }, (_, index) => ({
    ...template,
    body: `{"id":${index + 1},"name":"Fern","tag":"bench"}`,
  }));
  let nextEvent = 0;
  const create = async (): Promise<void> => {
    const answer = await handler(events[nextEvent++] ?? template);
    if (answer.statusCode !== 200) throw new Error(`create answered ${answer.statusCode}: ${answer.body}`);
  };
  const verify = () => authenticate(header);

  const restoreStdout = silenceStdout();
  const createCosts: BlockCost[] = [];
  const verifyCosts: BlockCost[] = [];
  try {
    await costPerCall(WARM_UP_CALLS, create); // the first call fetches and caches the key set
    await costPerCall(WARM_UP_CALLS, verify);
    for (let block = 0; block < blocks; block++) {
      createCosts.push(await costPerCall(BLOCK_SIZE, create));
      verifyCosts.push(await costPerCall(BLOCK_SIZE, verify));
    }
  } finally {
    restoreStdout();
  }
  const createCpuMicros = summarize(createCosts.map((cost) => cost.cpuMicros));
  const verifyCpuMicros = summarize(verifyCosts.map((cost) => cost.cpuMicros));
  const result: WarmCpuResult = {
    createCpuMicros,
    verifyCpuMicros,
    createWallMicros: summarize(createCosts.map((cost) => cost.wallMicros)),
    verifyWallMicros: summarize(verifyCosts.map((cost) => cost.wallMicros)),
    ratio: createCpuMicros.median / verifyCpuMicros.median,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
