/**
 * The figures docs/DEPLOY.md gives for what a deployment holds and costs, counted again from the code
 * and the synthesized template, and the sums it gives checked against their parts: the metrics the
 * handler can write (lambda/metrics.ts), the dashboard's lines and distinct metrics, the alarms and the
 * metrics they watch, the month with no traffic (which custom metrics do not cost), the canary's minutes.
 * Whitespace is collapsed first, so rewrapping a line is free.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { METRIC_NAMES } from "../../lambda/metrics.ts";
import { synthesizedTemplate } from "../support/synthesize.ts";

const guide = readFileSync(new URL("../../docs/DEPLOY.md", import.meta.url), "utf8").replace(/\s+/g, " ");
// At the top level, as the other synthesizing tests do: a synth is slow-ish, and no test's timeout applies.
const resources = Object.values(synthesizedTemplate().Resources ?? {}) as {
  Type: string;
  Properties: Record<string, unknown>;
}[];

/** Every capture of `pattern` in the guide, as numbers (`$1.30` and `1,000` read as 1.3 and 1000). */
function stated(pattern: RegExp): number[][] {
  return [...guide.matchAll(new RegExp(pattern, "g"))].map((match) =>
    match.slice(1).map((value) => Number(value.replaceAll(",", ""))),
  );
}

/** The one figure `pattern` captures, which the guide must state at least once and the same each time. */
function figure(pattern: RegExp): number {
  const values = stated(pattern).map(([value]) => value);
  expect(values.length, `DEPLOY.md no longer says ${pattern}`).toBeGreaterThan(0);
  expect(new Set(values).size, `DEPLOY.md says ${pattern} with different values: ${values}`).toBe(1);
  return values[0] ?? Number.NaN;
}

const cents = (value: number) => Math.round(value * 100);

/** The dashboard's graph lines, and the distinct metrics they draw (a metric drawn with two stats is one). */
function dashboardMetrics(): { lines: number; distinct: number } {
  const dashboard = resources.find(({ Type }) => Type === "AWS::CloudWatch::Dashboard");
  if (!dashboard) throw new Error("the stack has no dashboard");
  const parts = (dashboard.Properties.DashboardBody as { "Fn::Join": [string, unknown[]] })["Fn::Join"][1];
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

/** The alarms, and the metrics they watch: one each, or each metric of a math expression. */
function alarmMetrics(): { alarms: number; metrics: number } {
  const alarms = resources.filter(({ Type }) => Type === "AWS::CloudWatch::Alarm");
  const metrics = alarms.map(({ Properties }) =>
    Properties.MetricName !== undefined
      ? 1
      : ((Properties.Metrics as { MetricStat?: unknown }[] | undefined) ?? []).filter(
          (metric) => metric.MetricStat,
        ).length,
  );
  return { alarms: alarms.length, metrics: metrics.reduce((sum, count) => sum + count, 0) };
}

describe("docs/DEPLOY.md counts what the stack has", () => {
  it("the custom metrics: the names of METRIC_NAMES, one dimension value each", () => {
    expect(figure(/\*\*(\d+)\*\* custom metrics/)).toBe(METRIC_NAMES.length);
    expect(figure(/(\d+) names × 1 dimension value/)).toBe(METRIC_NAMES.length);
    expect(figure(/at most (\d+) × \$0\.30/)).toBe(METRIC_NAMES.length);
  });

  it("the dashboard's lines and distinct metrics", () => {
    const { lines, distinct } = dashboardMetrics();
    expect(figure(/graphing \*\*(\d+)\*\* lines/)).toBe(lines);
    expect(figure(/lines of \*\*(\d+)\*\* distinct metrics/)).toBe(distinct);
    expect(figure(/this one graphs (\d+) metrics/)).toBe(distinct);
  });

  it("the alarms and the metrics they watch", () => {
    const { alarms, metrics } = alarmMetrics();
    expect(figure(/\*\*(\d+)\*\* alarms watching/)).toBe(alarms);
    expect(figure(/alarms watching \*\*(\d+)\*\* metrics/)).toBe(metrics);
    expect(figure(/(\d+) × \$0\.10 = /)).toBe(metrics);
  });
});

describe("docs/DEPLOY.md's sums agree with their parts, and with each other", () => {
  const metricsCost = () => figure(/at most \d+ × \$0\.30 = \*\*\$([\d.]+)\*\*/);
  const alarmsCost = () => figure(/\d+ × \$0\.10 = \*\*\$([\d.]+)\*\*/);
  const idle = () => figure(/\*\*\$([\d.]+) a month before any request\*\*/);

  it("prices each count: metrics at $0.30, alarm metrics at $0.10", () => {
    expect(cents(metricsCost())).toBe(cents(METRIC_NAMES.length * 0.3));
    expect(cents(alarmsCost())).toBe(cents(alarmMetrics().metrics * 0.1));
  });

  it("leaves custom metrics, which cost nothing without traffic, out of the month with no traffic", () => {
    const [parts] = stated(
      /a month before any request\*\* \(\$([\d.]+) app client \+ \$([\d.]+) dashboard \+ \$([\d.]+) alarms\)/,
    );
    expect(parts, "the month before any request, by its parts").toBeDefined();
    const [client = 0, dashboard = 0, alarms = 0] = parts ?? [];
    expect(cents(alarms)).toBe(cents(alarmsCost()));
    expect(cents(client + dashboard + alarms)).toBe(cents(idle()));
    expect(figure(/about \*\*\$([\d.]+) a month with no traffic at all\*\*/)).toBe(idle());
    expect(cents(figure(/\$([\d.]+) with your own issuer/))).toBe(cents(idle() - client));
    expect(figure(/up to \*\*\$([\d.]+) a month\*\* of custom metrics/)).toBe(metricsCost());
  });

  it("adds a million creates from one caller up from the same parts", () => {
    const [sum] = stated(
      /about \$([\d.]+) \(\$([\d.]+) \+ \$([\d.]+) \+ \$([\d.]+) \+ \$([\d.]+) for a kilobyte logged \+ \$([\d.]+)\)/,
    );
    const [total = 0, idleMonth = 0, metrics = 0, creates = 0, logged = 0, caller = 0] = sum ?? [];
    expect(idleMonth).toBe(idle());
    expect(metrics).toBe(metricsCost());
    expect(creates).toBe(figure(/\*\*about \$([\d.]+) per million creates\*\*/));
    expect(caller).toBe(figure(/\*\*\$([\d.]+) a month per caller\*\*/));
    expect(
      Math.abs(cents(idleMonth + metrics + creates + logged + caller) - cents(total)),
    ).toBeLessThanOrEqual(5);
  });

  it("gives a canary deploy one duration, with the canary the stack configures", () => {
    const durations = stated(/about (\d+) minutes[:,] 5 of them the canary/).map(([minutes]) => minutes);
    expect(durations.length).toBeGreaterThan(1);
    expect(new Set(durations).size, `${durations}`).toBe(1);
    const group = resources.find(({ Type }) => Type === "AWS::CodeDeploy::DeploymentGroup");
    expect(JSON.stringify(group?.Properties.DeploymentConfigName)).toContain("Canary10Percent5Minutes");
    expect(guide).toContain("10% of the traffic for 5 minutes");
  });
});
