/**
 * The parts of docs/DEPLOY.md that the code knows, written by `npm run generate` between marker comments:
 * the stack in figures (counted from the synthesized template), its alarms (their descriptions, which name
 * each threshold), what it costs, and the context options' defaults. Prose elsewhere states none of these
 * figures; test/infra/deploy-guide.test.ts fails when the guide was not regenerated.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { App } from "aws-cdk-lib";
import { costPerMillionCreates } from "../bench/cost.ts";
import { PRICES_READ_ON, PRICES_REGION } from "../bench/prices.ts";
import { CONTEXT_DEFAULTS, CONTEXT_KEYS } from "../infra/config.ts";
import { addPlantStore } from "../infra/plant-store-app.ts";
import type { Template } from "../infra/rules/deploy-rule.ts";
import { DEFAULT_REQUIRED_SCOPE, DEFAULT_STORE_DEADLINE_MS } from "../lambda/defaults.ts";
import { METRIC_NAMES } from "../lambda/metrics.ts";

const GUIDE_PATH = fileURLToPath(new URL("../docs/DEPLOY.md", import.meta.url));

/**
 * Prices of what the stack holds and bills by the month or by the token, us-east-1 list prices read on
 * 2026-11-23, several not confirmed on AWS's own pages: re-read them before quoting.
 */
const MONTHLY_USD = {
  /** Cognito M2M app client: a third-party article (May 2025); not confirmed on AWS's Cognito pricing page. */
  cognitoAppClient: 6.0,
  /** A third-party summary of CloudWatch pricing (2026-06-13); the free tier is AWS's CloudWatch pricing page. */
  dashboard: 3.0,
  /** A standard-resolution alarm metric: a third-party page (undated); free tier as above. */
  alarmMetric: 0.1,
  /** A custom metric, prorated by the hour it receives data: a third-party calculator. */
  customMetric: 0.3,
};
/** Cognito M2M token requests: a third-party price index, billing code CUPM2MTokenRequestsFull (2025-04-27). */
const COGNITO_USD_PER_TOKEN = 2.25 / 1000;
/** CloudWatch Logs ingestion, per GB: the same summary of CloudWatch pricing. */
const LOGS_USD_PER_GB = 0.5;
/** A caller that reuses its one-hour token asks for one at most this often in a 30-day month. */
const TOKENS_PER_CALLER_MONTH = 30 * 24;
/**
 * The function's billed duration per create in AWS, in ms: its own CPU at the default memory's share
 * plus one DynamoDB round trip. An assumption from the bench's figures, not measured in AWS.
 */
const ASSUMED_DURATION_MS = { low: 5, high: 10 };

interface Block {
  readonly name: string;
  readonly write: (template: Template, current: string) => string;
}

const usd = (value: number) =>
  `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

function resources(template: Template, type: string) {
  return Object.entries(template.Resources ?? {}).filter(([, resource]) => resource.Type === type);
}

/** The dashboard's graph lines, and the distinct metrics they draw (a metric drawn with two stats is one). */
function dashboardMetrics(template: Template): { lines: number; distinct: number } {
  const [[, dashboard] = []] = resources(template, "AWS::CloudWatch::Dashboard");
  const joined = dashboard?.Properties?.DashboardBody as { "Fn::Join": [string, unknown[]] } | undefined;
  if (!joined) throw new Error("the stack has no dashboard");
  const parts = joined["Fn::Join"][1];
  // A reference ({Ref: …}) stands in a JSON string: written out as the text of the reference itself.
  const body = JSON.parse(
    parts
      .map((part) => (typeof part === "string" ? part : JSON.stringify(part).replaceAll('"', "'")))
      .join(""),
  ) as { widgets: { properties?: { metrics?: unknown[][] } }[] };
  const metrics = body.widgets.flatMap((widget) => widget.properties?.metrics ?? []);
  const identity = (metric: unknown[]) => metric.filter((part) => typeof part === "string").join(" ");
  return { lines: metrics.length, distinct: new Set(metrics.map(identity)).size };
}

function alarms(template: Template) {
  return resources(template, "AWS::CloudWatch::Alarm").map(([logicalId, { Properties = {} }]) => ({
    // The construct's id: `Alarms<id><hash>`.
    id: logicalId.replace(/^Alarms/, "").replace(/[0-9A-F]{8}$/, ""),
    description: String(Properties.AlarmDescription),
    // One, or each metric of a math expression (each is billed).
    metrics:
      Properties.MetricName !== undefined
        ? 1
        : ((Properties.Metrics as { MetricStat?: unknown }[] | undefined) ?? []).filter(
            (metric) => metric.MetricStat,
          ).length,
  }));
}

/** The canary the deployment group runs: its share of the traffic and its minutes. */
function canary(template: Template): { percent: number; minutes: number } {
  const [[, group] = []] = resources(template, "AWS::CodeDeploy::DeploymentGroup");
  const name = JSON.stringify(group?.Properties?.DeploymentConfigName ?? "");
  const match = /Canary(\d+)Percent(\d+)Minutes/.exec(name);
  if (!match) throw new Error(`the deployment group runs no canary: ${name}`);
  return { percent: Number(match[1]), minutes: Number(match[2]) };
}

function handlerTimeoutSeconds(template: Template): number {
  const handlers = resources(template, "AWS::Lambda::Function").filter(([id]) =>
    /^Handler[0-9A-F]{8}$/.test(id),
  );
  const timeout = handlers[0]?.[1].Properties?.Timeout;
  if (handlers.length !== 1 || typeof timeout !== "number") throw new Error("no handler with a timeout");
  return timeout;
}

function costs(template: Template) {
  const alarmMetrics = alarms(template).reduce((sum, alarm) => sum + alarm.metrics, 0);
  const alarmsUsd = alarmMetrics * MONTHLY_USD.alarmMetric;
  const idleOwnIssuerUsd = MONTHLY_USD.dashboard + alarmsUsd;
  const idleUsd = MONTHLY_USD.cognitoAppClient + idleOwnIssuerUsd;
  const metricsUsd = METRIC_NAMES.length * MONTHLY_USD.customMetric;
  const perCallerUsd = TOKENS_PER_CALLER_MONTH * COGNITO_USD_PER_TOKEN;
  const memory = CONTEXT_DEFAULTS.memorySize;
  const createsLow = costPerMillionCreates(ASSUMED_DURATION_MS.low, memory).totalUsd;
  const createsHigh = costPerMillionCreates(ASSUMED_DURATION_MS.high, memory).totalUsd;
  // A kilobyte logged per request, a million requests: about a GB.
  const perKilobyteLoggedUsd = (1e6 * 1024 * LOGS_USD_PER_GB) / 1024 ** 3;
  const millionFromOneCallerUsd = idleUsd + metricsUsd + createsHigh + perKilobyteLoggedUsd + perCallerUsd;
  return {
    alarmMetrics,
    alarmsUsd,
    idleUsd,
    idleOwnIssuerUsd,
    metricsUsd,
    perCallerUsd,
    createsLow,
    createsHigh,
    perKilobyteLoggedUsd,
    millionFromOneCallerUsd,
  };
}

const figures: Block = {
  name: "the stack in figures",
  write(template) {
    const { lines, distinct } = dashboardMetrics(template);
    const all = alarms(template);
    const { percent, minutes } = canary(template);
    const c = costs(template);
    return [
      "| | |",
      "|---|---|",
      `| custom metrics | ${METRIC_NAMES.length} (\`METRIC_NAMES\`, one dimension value each), and \`Fault\` once more per version that faults |`,
      `| dashboard | 1, graphing ${lines} lines of ${distinct} distinct metrics |`,
      `| alarms | ${all.length}, watching ${c.alarmMetrics} metrics (a math expression bills each of its metrics) |`,
      `| canary | ${percent}% of the traffic for ${minutes} minutes, then all of it |`,
      `| function timeout | ${handlerTimeoutSeconds(template)} s (the store deadline is ${DEFAULT_STORE_DEADLINE_MS / 1000} s) |`,
      `| cost with no traffic | about **${usd(c.idleUsd)} a month** (${usd(c.idleOwnIssuerUsd)} with your own issuer) |`,
      `| cost of a million creates a month from one caller | about **${usd(c.millionFromOneCallerUsd)}** ([Cost](#cost)) |`,
    ].join("\n");
  },
};

const alarmTable: Block = {
  name: "the alarms",
  write(template) {
    const rows = alarms(template)
      .sort((a, b) => Number(b.id.startsWith("NewVersion")) - Number(a.id.startsWith("NewVersion")))
      .map(({ id, description }) => {
        const kind = id.startsWith("NewVersion") ? "rollback; no mail" : "operator";
        return `| \`${id}\` | ${description} | ${kind} |`;
      });
    return ["| Alarm | Fires when | Kind |", "|---|---|---|", ...rows].join("\n");
  },
};

const costTable: Block = {
  name: "the cost",
  write(template) {
    const c = costs(template);
    const memory = CONTEXT_DEFAULTS.memorySize;
    const computePerMs = costPerMillionCreates(1, memory).lambdaComputeUsd;
    const fixed = costPerMillionCreates(0, memory).totalUsd;
    const { low, high } = ASSUMED_DURATION_MS;
    return [
      "| Item | Price | Per month |",
      "|---|---|---|",
      `| Cognito app client (the default issuer only) | ${usd(MONTHLY_USD.cognitoAppClient)} a client | ${usd(MONTHLY_USD.cognitoAppClient)} |`,
      `| Dashboard | ${usd(MONTHLY_USD.dashboard)} | ${usd(MONTHLY_USD.dashboard)}, or $0 within the free tier (3 dashboards of 50 metrics) |`,
      `| Alarms | ${usd(MONTHLY_USD.alarmMetric)} an alarm metric | ${c.alarmMetrics} × ${usd(MONTHLY_USD.alarmMetric)} = ${usd(c.alarmsUsd)}; the free tier covers 10 |`,
      `| **With no traffic** | | **${usd(c.idleUsd)}** (${usd(c.idleOwnIssuerUsd)} with your own issuer) |`,
      `| Custom metrics | ${usd(MONTHLY_USD.customMetric)} a metric, by the hour it receives data | $0 with no traffic; at most ${METRIC_NAMES.length} × ${usd(MONTHLY_USD.customMetric)} = ${usd(c.metricsUsd)} |`,
      `| Cognito tokens | ${usd(COGNITO_USD_PER_TOKEN * 1000)} per 1,000 | ${usd(c.perCallerUsd)} per caller that keeps its token for its hour; a token per request costs ${usd(COGNITO_USD_PER_TOKEN * 1e6)} per million |`,
      `| Creates: Lambda, the HTTP API, one DynamoDB write | $${fixed.toFixed(3)} + $${computePerMs.toFixed(4)} × the billed ms, per million (${memory} MB) | ${usd(c.createsLow)}–${usd(c.createsHigh)} per million at ${low}–${high} ms |`,
      `| Logs ingestion | ${usd(LOGS_USD_PER_GB)} per GB | ${usd(c.perKilobyteLoggedUsd)} per million requests for each kilobyte logged |`,
      `| **A million creates from one caller** | | **about ${usd(c.millionFromOneCallerUsd)}** (at ${high} ms and a kilobyte logged) |`,
      "",
      `Per-request prices: \`bench/prices.ts\` (${PRICES_REGION}, copied ${PRICES_READ_ON}); monthly ones:`,
      "`tools/deploy-facts.ts`, with where each was read. Several are from third-party summaries, not AWS's",
      "pages: re-read them before quoting.",
    ].join("\n");
  },
};

/** The Default cell of each option the code gives a default; the table must list every option once. */
const optionDefaults: Block = {
  name: "the context options",
  write(_template, current) {
    const defaults: Record<string, string> = {
      ...Object.fromEntries(Object.entries(CONTEXT_DEFAULTS).map(([key, value]) => [key, String(value)])),
      requiredScope: DEFAULT_REQUIRED_SCOPE,
    };
    const listed: string[] = [];
    const table = current.replace(/^\| `(\w+)` \|[^|]*\|/gm, (row, key: string) => {
      listed.push(key);
      return key in defaults ? `| \`${key}\` | \`${defaults[key]}\` |` : row;
    });
    const missing = CONTEXT_KEYS.filter((key) => !listed.includes(key));
    const unknown = listed.filter((key) => !(CONTEXT_KEYS as readonly string[]).includes(key));
    if (missing.length > 0 || unknown.length > 0 || new Set(listed).size !== listed.length) {
      throw new Error(
        `docs/DEPLOY.md's option table must list each of infra/config.ts's CONTEXT_KEYS once: missing ${missing.join(", ") || "none"}, unknown ${unknown.join(", ") || "none"}`,
      );
    }
    return table;
  },
};

const BLOCKS = [figures, alarmTable, costTable, optionDefaults];

const start = (block: Block) => `<!-- ${block.name}: written by npm run generate from the code -->`;
const end = (block: Block) => `<!-- end of ${block.name} -->`;

/** The guide with every generated block written from `template` and the code. */
export function deployGuideFromCode(guide: string, template: Template): string {
  return BLOCKS.reduce((text, block) => {
    const from = text.indexOf(start(block));
    const to = text.indexOf(end(block));
    if (from === -1 || to < from) throw new Error(`docs/DEPLOY.md must hold ${start(block)} … ${end(block)}`);
    const bodyStart = from + start(block).length + 1;
    const current = text.slice(bodyStart, to).replace(/\n$/, "");
    return `${text.slice(0, bodyStart)}${block.write(template, current)}\n${text.slice(to)}`;
  }, guide);
}

/** The single-Region stack's template with cdk.json's context, as `cdk synth` writes it, without bundling. */
function synthesizedTemplate(): Template {
  const cdkJson = JSON.parse(readFileSync(new URL("../cdk.json", import.meta.url), "utf8")) as {
    context: Record<string, unknown>;
  };
  const outdir = mkdtempSync(join(tmpdir(), "plant-store-deploy-facts-"));
  try {
    const app = new App({ outdir, context: { ...cdkJson.context, "aws:cdk:bundling-stacks": [] } });
    const stack = addPlantStore(app);
    return app.synth().getStackByName(stack.stackName).template as Template;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(GUIDE_PATH, deployGuideFromCode(readFileSync(GUIDE_PATH, "utf8"), synthesizedTemplate()));
  console.log(`wrote ${GUIDE_PATH}: ${BLOCKS.map((block) => block.name).join(", ")}`);
}
