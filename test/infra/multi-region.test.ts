/**
 * The multi-Region app as synthesized (-c regions): a shared stack in the first Region with the one
 * strongly consistent table and the one issuer, a stack per Region that serves from its own replica, and
 * with a domain, latency records whose health follows each Region's. Synthesis itself fails on any finding
 * of cdk-nag, CloudFormation Validate or the deploy rules in any stack; cfn-lint runs on every template.
 */

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Tags } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { describe, expect, it, onTestFinished } from "vitest";
import { readPlantStoreConfig, STACK_TAG } from "../../infra/config.ts";
import { READER_PROPERTIES } from "../../infra/key-set-delivery/key-set-reader.ts";
import { HEALTH_EVALUATION_PERIODS, UNHEALTHY_5XX_SHARE } from "../../infra/multi-region/region-routing.ts";
import { PlantStoreStack } from "../../infra/plant-store-stack.ts";
import type { TemplateResource } from "../../infra/rules/deploy-rule.ts";
import { checkStack } from "../../infra/rules/plugin.ts";
import { describeRoutes } from "../../lambda/http/routes.ts";
import { type SynthesizedAppStack, synthesizedApp, synthesizedTemplate } from "../support/synthesize.ts";

const US = ["us-east-1", "us-east-2", "us-west-2"];
const certificate = (region: string) =>
  `arn:aws:acm:${region}:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789`;

const threeRegions = synthesizedApp({ regions: US.join(",") });
const withWitness = synthesizedApp({ regions: "eu-west-2,eu-west-1", witnessRegion: "eu-central-1" });
const withDomain = synthesizedApp({
  regions: US.join(","),
  domainName: "plants.example.com",
  hostedZoneId: "Z0123456789ABCDEFGHIJ",
  certificateArns: US.map(certificate).join(","),
  alarmEmail: "ops@example.com",
});

type Resource = TemplateResource & { DependsOn?: unknown };

function resourcesOf(stack: SynthesizedAppStack, type: string): [string, Resource][] {
  return Object.entries(stack.template.Resources ?? {}).filter(([, resource]) => resource.Type === type);
}

function only(stack: SynthesizedAppStack, type: string): [string, Resource] {
  const found = resourcesOf(stack, type);
  if (found.length !== 1 || found[0] === undefined) {
    throw new Error(`expected one ${type} in ${stack.name}, found ${found.length}`);
  }
  return found[0];
}

function stackNamed(app: { stacks: SynthesizedAppStack[] }, name: string): SynthesizedAppStack {
  const stack = app.stacks.find((candidate) => candidate.name === name);
  if (stack === undefined) throw new Error(`no stack ${name}`);
  return stack;
}

/** The API's function: the stack's other one reads the issuer's key set at deploy time. */
function handlerOf(stack: SynthesizedAppStack): Resource {
  const handlers = resourcesOf(stack, "AWS::Lambda::Function").filter(([id]) =>
    /^Handler[0-9A-F]{8}$/.test(id),
  );
  if (handlers.length !== 1 || handlers[0] === undefined)
    throw new Error(`expected one handler in ${stack.name}`);
  return handlers[0][1];
}

function environmentOf(stack: SynthesizedAppStack): Record<string, unknown> {
  const handler = handlerOf(stack);
  const environment = handler.Properties?.Environment as { Variables: Record<string, unknown> } | undefined;
  return environment?.Variables ?? {};
}

describe("-c regions=us-east-1,us-east-2,us-west-2", () => {
  const shared = stackNamed(threeRegions, "PlantStore-shared");

  it("is a shared stack in the first Region and one stack per Region, each depending on the shared one", () => {
    expect(threeRegions.stacks.map(({ name, region }) => [name, region]).sort()).toEqual([
      ["PlantStore-shared", "us-east-1"],
      ["PlantStore-us-east-1", "us-east-1"],
      ["PlantStore-us-east-2", "us-east-2"],
      ["PlantStore-us-west-2", "us-west-2"],
    ]);
    for (const region of US) {
      expect(stackNamed(threeRegions, `PlantStore-${region}`).dependencies).toContain("PlantStore-shared");
    }
  });

  it("has no finding of cdk-nag in any stack", () => {
    expect(threeRegions.nagFindings).toEqual([]);
    expect(withWitness.nagFindings).toEqual([]);
    expect(withDomain.nagFindings).toEqual([]);
  });

  it("declares one table, strongly consistent, with a replica in every Region, each kept as the single-Region table is", () => {
    const [, table] = only(shared, "AWS::DynamoDB::GlobalTable");
    expect(table.DeletionPolicy).toBe("Retain");
    expect(table.UpdateReplacePolicy).toBe("Retain");
    expect(table.Properties).toMatchObject({
      TableName: "PlantStore-plants",
      MultiRegionConsistency: "STRONG",
      BillingMode: "PAY_PER_REQUEST",
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "N" }],
      SSESpecification: { SSEEnabled: true, SSEType: "KMS" },
    });
    expect(table.Properties).not.toHaveProperty("GlobalTableWitnesses");
    const replicas = table.Properties?.Replicas as Record<string, unknown>[];
    expect(replicas.map((replica) => replica.Region).sort()).toEqual(US);
    for (const replica of replicas) {
      expect(replica).toMatchObject({
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    }
    for (const region of US) {
      const regional = stackNamed(threeRegions, `PlantStore-${region}`);
      expect(resourcesOf(regional, "AWS::DynamoDB::Table")).toEqual([]);
      expect(resourcesOf(regional, "AWS::DynamoDB::GlobalTable")).toEqual([]);
    }
  });

  it.each(US)(
    "gives the function in %s its own Region's replica, and the write and read on it only",
    (region) => {
      const regional = stackNamed(threeRegions, `PlantStore-${region}`);
      expect(environmentOf(regional).TABLE_NAME).toBe("PlantStore-plants");
      // The Lambda runtime sets AWS_REGION to the function's own Region; the stack is pinned to it.
      expect(regional.region).toBe(region);
      const statements = JSON.stringify(resourcesOf(regional, "AWS::IAM::Policy"));
      expect(statements).toContain(`:dynamodb:${region}:`);
      for (const other of US.filter((candidate) => candidate !== region)) {
        expect(statements).not.toContain(`:dynamodb:${other}:`);
      }
    },
  );

  it.each(US)("makes the function in %s trust the one user pool, in the first Region", (region) => {
    const regional = stackNamed(threeRegions, `PlantStore-${region}`);
    const variables = environmentOf(regional);
    const fromShared = (outputOf: string) => ({
      "Fn::GetStackOutput": {
        StackName: "PlantStore-shared",
        Region: "us-east-1",
        OutputName: expect.stringMatching(new RegExp(`^PublishOutputRef${outputOf}`)),
      },
    });
    expect(variables.JWT_CLIENT_IDS).toEqual(fromShared("TokenIssuerUserPoolMachineClient"));
    expect(variables.JWT_ISSUER).toEqual({
      "Fn::Join": [
        "",
        [
          "https://cognito-idp.us-east-1.",
          { Ref: "AWS::URLSuffix" },
          "/",
          fromShared("TokenIssuerUserPool[0-9A-F]"),
        ],
      ],
    });
    expect(resourcesOf(regional, "AWS::Cognito::UserPool")).toEqual([]);
    expect(resourcesOf(shared, "AWS::Cognito::UserPool")).toHaveLength(1);
  });

  it.each(US)(
    "gives %s the function, API, canary, alarms and dashboard of the single-Region stack",
    (region) => {
      const regional = stackNamed(threeRegions, `PlantStore-${region}`);
      expect(handlerOf(regional)).toBeDefined();
      for (const type of [
        "AWS::Lambda::Alias",
        "AWS::ApiGatewayV2::Api",
        "AWS::CodeDeploy::DeploymentGroup",
        "AWS::CloudWatch::Dashboard",
      ]) {
        expect(resourcesOf(regional, type), type).toHaveLength(1);
      }
      expect(resourcesOf(regional, "AWS::CloudWatch::Alarm").length).toBeGreaterThan(5);
    },
  );

  it("has no finding of the deploy rules in any stack", () => {
    for (const { template, region, name } of [
      ...threeRegions.stacks,
      ...withWitness.stacks,
      ...withDomain.stacks,
    ]) {
      expect(checkStack({ template, region }), name).toEqual([]);
    }
  });

  it("keeps the global table's protection in its deploy rule: a replica without it is a finding", () => {
    const template = structuredClone(shared.template);
    const [id] = only(shared, "AWS::DynamoDB::GlobalTable");
    const replicas = template.Resources?.[id]?.Properties?.Replicas as Record<string, unknown>[];
    const [first] = replicas;
    if (first === undefined) throw new Error("no replica");
    first.DeletionProtectionEnabled = false;
    expect(checkStack({ template, region: "us-east-1" }).map((violation) => violation.description)).toEqual([
      expect.stringMatching(/^deletion protection is off\./),
    ]);
  });
});

describe("-c regions=eu-west-2,eu-west-1 -c witnessRegion=eu-central-1", () => {
  it("has two replicas and the witness, and a stack for each serving Region only", () => {
    const [, table] = only(stackNamed(withWitness, "PlantStore-shared"), "AWS::DynamoDB::GlobalTable");
    expect(table.Properties?.MultiRegionConsistency).toBe("STRONG");
    expect(table.Properties?.GlobalTableWitnesses).toEqual([{ Region: "eu-central-1" }]);
    const replicas = table.Properties?.Replicas as { Region: string }[];
    expect(replicas.map((replica) => replica.Region).sort()).toEqual(["eu-west-1", "eu-west-2"]);
    expect(withWitness.stacks.map(({ name, region }) => [name, region]).sort()).toEqual([
      ["PlantStore-eu-west-1", "eu-west-1"],
      ["PlantStore-eu-west-2", "eu-west-2"],
      ["PlantStore-shared", "eu-west-2"],
    ]);
  });
});

describe("-c regions with -c domainName, a hosted zone and a certificate per Region", () => {
  it.each(US)("gives %s its own domain with its own certificate, and a latency record for it", (region) => {
    const regional = stackNamed(withDomain, `PlantStore-${region}`);
    const [domainId, domain] = only(regional, "AWS::ApiGatewayV2::DomainName");
    const { Tags: _tags, ...domainProperties } = domain.Properties ?? {};
    expect(domainProperties).toEqual({
      DomainName: "plants.example.com",
      DomainNameConfigurations: [
        {
          CertificateArn: certificate(region),
          EndpointType: "REGIONAL",
          IpAddressType: "dualstack",
          SecurityPolicy: "TLS_1_2",
        },
      ],
    });
    // An A and an AAAA record (the domain is dual-stack), alike but for their type.
    const records = resourcesOf(regional, "AWS::Route53::RecordSet").map(([, record]) => record.Properties);
    expect(records).toEqual(
      ["A", "AAAA"].map((type) => ({
        Name: "plants.example.com.",
        Type: type,
        HostedZoneId: "Z0123456789ABCDEFGHIJ",
        Region: region,
        SetIdentifier: region,
        AliasTarget: {
          DNSName: { "Fn::GetAtt": [domainId, "RegionalDomainName"] },
          HostedZoneId: { "Fn::GetAtt": [domainId, "RegionalHostedZoneId"] },
        },
        HealthCheckId: { Ref: expect.any(String) },
      })),
    );
  });

  it.each(US)(
    "keeps %s in DNS only while its 5xx-share alarm is not in alarm and its endpoint answers",
    (region) => {
      const regional = stackNamed(withDomain, `PlantStore-${region}`);
      const resources = regional.template.Resources ?? {};
      const [[, record] = ["", {}]] = resourcesOf(regional, "AWS::Route53::RecordSet");
      const healthCheckOf = (reference: unknown) => {
        const id = (reference as { Ref: string }).Ref;
        return resources[id]?.Properties?.HealthCheckConfig as Record<string, unknown>;
      };
      const regionCheck = healthCheckOf(record.Properties?.HealthCheckId);
      expect(regionCheck).toMatchObject({ Type: "CALCULATED", HealthThreshold: 2 });
      const children = (regionCheck.ChildHealthChecks as unknown[]).map(healthCheckOf);
      expect(children.map((child) => child.Type).sort()).toEqual(["CLOUDWATCH_METRIC", "TCP"]);

      const alarmCheck = children.find((child) => child.Type === "CLOUDWATCH_METRIC");
      const alarmIdentifier = alarmCheck?.AlarmIdentifier as { Name: { Ref: string }; Region: string };
      expect(alarmIdentifier.Region).toBe(region);
      expect(alarmCheck?.InsufficientDataHealthStatus).toBe("Healthy");
      // Route 53 follows only single-metric alarms with a standard statistic: the share of the access
      // log's lines that are 5xx of ours (each line 1 or the default 0), not a body too large for Lambda.
      const [apiId] = only(regional, "AWS::ApiGatewayV2::Api");
      const metricName = { "Fn::Join": ["", ["ServerFaultAnswer-", { Ref: apiId }]] };
      const [logGroupId] = resourcesOf(regional, "AWS::Logs::LogGroup").find(([id]) =>
        id.startsWith("ApiAccessLogGroup"),
      ) ?? [""];
      expect(
        Object.values(resources)
          .filter((resource) => resource.Type === "AWS::Logs::MetricFilter")
          .map((filter) => filter.Properties),
      ).toContainEqual({
        LogGroupName: { Ref: logGroupId },
        FilterPattern: '{ ($.status = "5*") && ($.integrationStatus != "413") }',
        MetricTransformations: [
          { MetricNamespace: "PlantStore", MetricName: metricName, MetricValue: "1", DefaultValue: 0 },
        ],
      });
      expect(resources[alarmIdentifier.Name.Ref]?.Properties).toMatchObject({
        Namespace: "PlantStore",
        MetricName: metricName,
        Statistic: "Average",
        Period: 60,
        Threshold: UNHEALTHY_5XX_SHARE,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
        EvaluationPeriods: HEALTH_EVALUATION_PERIODS,
        DatapointsToAlarm: HEALTH_EVALUATION_PERIODS,
        TreatMissingData: "notBreaching",
      });

      const [domainId] = only(regional, "AWS::ApiGatewayV2::DomainName");
      expect(children.find((child) => child.Type === "TCP")).toMatchObject({
        FullyQualifiedDomainName: { "Fn::GetAtt": [domainId, "RegionalDomainName"] },
        Port: 443,
      });
    },
  );

  it("stops a deploy of a Region whose certificate is another Region's, before anything is created", () => {
    for (const region of US) {
      const rules = JSON.stringify(stackNamed(withDomain, `PlantStore-${region}`).template.Rules);
      expect(rules).toContain(JSON.stringify({ "Fn::Equals": [{ Ref: "AWS::Region" }, region] }));
    }
  });
});

describe("without -c regions", () => {
  it("is the one environment-agnostic stack, as the stack built directly from the same context", () => {
    const app = synthesizedApp({});
    expect(app.stacks.map(({ name, region }) => [name, region])).toEqual([["PlantStore", undefined]]);
    const cdkJson = JSON.parse(readFileSync(new URL("../../cdk.json", import.meta.url), "utf8")) as {
      context: Record<string, unknown>;
    };
    // An outdir of the test's own: without one, CDK synthesizes into a cdk.out folder in TMPDIR and leaves it.
    const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
    onTestFinished(() => rmSync(outdir, { recursive: true, force: true }));
    const directApp = new App({ outdir, context: { ...cdkJson.context, "aws:cdk:bundling-stacks": [] } });
    const direct = new PlantStoreStack(directApp, "PlantStore", {
      description: `Plant Store: ${describeRoutes()} on API Gateway HTTP API, Lambda and DynamoDB`,
      config: readPlantStoreConfig(() => undefined),
    });
    Tags.of(direct).add(STACK_TAG, "PlantStore", { excludeResourceTypes: ["AWS::CloudWatch::Dashboard"] });
    // The key-set reader's Synthesis property is the time of each synth, so that each deploy reads again.
    const timeless = (template: unknown) =>
      JSON.parse(
        JSON.stringify(template, (key, value) => (key === READER_PROPERTIES.synthesis ? "" : value)),
      );
    expect(timeless(app.stacks[0]?.template)).toEqual(timeless(Template.fromStack(direct).toJSON()));
  });

  it("declares the plants table exactly as before the multi-Region table shared its definition", () => {
    const template = synthesizedTemplate();
    const tables = Object.values(template.Resources ?? {}).filter(
      (resource) => resource.Type === "AWS::DynamoDB::Table",
    );
    expect(tables).toEqual([
      {
        Type: "AWS::DynamoDB::Table",
        Properties: {
          KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
          AttributeDefinitions: [{ AttributeName: "id", AttributeType: "N" }],
          BillingMode: "PAY_PER_REQUEST",
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          SSESpecification: { SSEEnabled: true },
          Tags: [{ Key: STACK_TAG, Value: "PlantStore" }],
        },
        UpdateReplacePolicy: "Retain",
        // Retain, not RetainExceptOnCreate since issue 33: a failed first create must roll back clean.
        DeletionPolicy: "Retain",
      },
    ]);
  });
});

/** cfn-lint's findings in the stacks' templates, as `<rule> <stack>.template.json:<line>`. */
function cfnLintFindings(stacks: SynthesizedAppStack[]): string[] {
  const directory = mkdtempSync(join(tmpdir(), "plant-store-cfn-lint-"));
  try {
    const files = stacks.map(({ name, template }) => {
      const file = join(directory, `${name}.template.json`);
      writeFileSync(file, JSON.stringify(template, undefined, 1));
      return file;
    });
    const result = spawnSync("cfn-lint", ["--format", "parseable", ...files], { encoding: "utf8" });
    return result.stdout
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => {
        const [file = "", lineNumber = "", , , , rule = ""] = line.split(":");
        return `${rule} ${file.replace(`${directory}/`, "")}:${lineNumber}`;
      });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const cfnLintInstalled = spawnSync("cfn-lint", ["--version"]).status === 0;
// At the top level, as the synths: cfn-lint takes seconds per template, more on a busy machine. Every kind
// of stack once: the Regions' with a domain (a superset of those without), both tables' shared stacks.
const cfnLintOfEveryKind = cfnLintInstalled
  ? cfnLintFindings([...withDomain.stacks, stackNamed(withWitness, "PlantStore-shared")])
  : [];

describe.skipIf(!cfnLintInstalled)(
  "cfn-lint (skipped where it is not installed: pip install cfn-lint)",
  () => {
    it("finds no error in any multi-Region stack, and no warning but the W3005 the single-Region stack has too", () => {
      expect(cfnLintOfEveryKind.filter((finding) => !finding.startsWith("W3005 "))).toEqual([]);
    });
  },
);
