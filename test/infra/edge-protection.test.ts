/**
 * `-c edgeProtection=waf`: CloudFront with an AWS WAF web ACL (in its own us-east-1 stack) in front of the
 * API, and the API closed to anything that does not come through it: no execute-api endpoint, and every
 * route behind an origin check that admits only CloudFront's secret header.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { perAddressLimit } from "../../infra/edge-web-acl-stack.ts";
import { ORIGIN_CHECK_SOURCE, ORIGIN_VERIFY_HEADER } from "../../infra/origin-check.ts";
import type { Template, TemplateResource } from "../../infra/rules/deploy-rule.ts";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { synthesizedTemplates } from "../support/synthesize.ts";

const CERTIFICATE_ARN = "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789";

const stacks = synthesizedTemplates({
  edgeProtection: "waf",
  domainName: "origin-7f3k.plants.example.com",
  certificateArn: CERTIFICATE_ARN,
});
const templateOf = (stackName: string): Template & { Outputs?: Record<string, { Value: unknown }> } => {
  const found = stacks.find((stack) => stack.stackName === stackName);
  if (found === undefined)
    throw new Error(`no stack ${stackName}: ${stacks.map((stack) => stack.stackName)}`);
  return found.template;
};
const main = templateOf("PlantStore");
const edge = templateOf("PlantStore-EdgeWebAcl");

function resourcesOf(template: Template, type: string): [string, TemplateResource][] {
  return Object.entries(template.Resources ?? {}).filter(([, resource]) => resource.Type === type);
}
function onlyOf(template: Template, type: string): Record<string, unknown> {
  const found = resourcesOf(template, type);
  if (found.length !== 1 || found[0] === undefined) throw new Error(`expected one ${type}`);
  return found[0][1].Properties ?? {};
}

describe("the web ACL", () => {
  const webAcl = onlyOf(edge, "AWS::WAFv2::WebACL") as {
    Scope: string;
    DefaultAction: unknown;
    Rules: { Name: string; Action?: unknown; Statement: Record<string, Record<string, unknown>> }[];
  };

  it("is CloudFront's, in us-east-1, and lets through what no rule blocks", () => {
    expect(webAcl.Scope).toBe("CLOUDFRONT");
    expect(webAcl.DefaultAction).toEqual({ Allow: {} });
  });

  it("blocks each client address beyond a tenth of the stage's rate, per minute", () => {
    const rateRule = webAcl.Rules.find((rule) => rule.Statement.RateBasedStatement !== undefined);
    expect(rateRule?.Action).toEqual({ Block: {} });
    expect(rateRule?.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: "IP",
      Limit: 300,
      EvaluationWindowSec: 60,
    });
    expect(perAddressLimit(50)).toBe(300);
    expect(perAddressLimit(1)).toBe(10);
  });

  it("applies AWS's managed rule groups, counting only a body the API itself limits and a missing User-Agent", () => {
    const groups = webAcl.Rules.flatMap(({ Statement }) =>
      Statement.ManagedRuleGroupStatement === undefined ? [] : [Statement.ManagedRuleGroupStatement],
    );
    expect(groups.map((group) => group.Name)).toEqual([
      "AWSManagedRulesAmazonIpReputationList",
      "AWSManagedRulesCommonRuleSet",
      "AWSManagedRulesKnownBadInputsRuleSet",
    ]);
    const counted = groups.flatMap((group) =>
      ((group.RuleActionOverrides ?? []) as { Name: string; ActionToUse: unknown }[]).map((override) => [
        override.Name,
        override.ActionToUse,
      ]),
    );
    expect(counted).toEqual([
      ["SizeRestrictions_BODY", { Count: {} }],
      ["NoUserAgent_HEADER", { Count: {} }],
    ]);
  });
});

describe("the distribution", () => {
  const config = onlyOf(main, "AWS::CloudFront::Distribution").DistributionConfig as {
    WebACLId: unknown;
    Origins: { DomainName: string; OriginCustomHeaders: { HeaderName: string; HeaderValue: unknown }[] }[];
    DefaultCacheBehavior: { AllowedMethods: string[]; ViewerProtocolPolicy: string };
  };

  it("uses the us-east-1 web ACL", () => {
    expect(config.WebACLId).toEqual({
      "Fn::GetStackOutput": expect.objectContaining({
        StackName: "PlantStore-EdgeWebAcl",
        Region: "us-east-1",
      }),
    });
  });

  it("sends every method to the API's custom domain, with the secret header from the generated secret", () => {
    const secretId = resourcesOf(main, "AWS::SecretsManager::Secret")[0]?.[0];
    expect(config.Origins).toEqual([
      expect.objectContaining({
        DomainName: "origin-7f3k.plants.example.com",
        OriginCustomHeaders: [
          {
            HeaderName: ORIGIN_VERIFY_HEADER,
            HeaderValue: {
              "Fn::Join": ["", ["{{resolve:secretsmanager:", { Ref: secretId }, ":SecretString:::}}"]],
            },
          },
        ],
      }),
    ]);
    expect(config.DefaultCacheBehavior.AllowedMethods).toContain("POST");
    expect(config.DefaultCacheBehavior.ViewerProtocolPolicy).toBe("https-only");
  });

  it("is where callers POST", () => {
    const distributionId = resourcesOf(main, "AWS::CloudFront::Distribution")[0]?.[0];
    expect(main.Outputs?.[OUTPUT_KEYS.apiUrl]?.Value).toEqual({
      "Fn::Join": ["", ["https://", { "Fn::GetAtt": [distributionId, "DomainName"] }, "/plants"]],
    });
  });
});

describe("the API, closed to anything but CloudFront", () => {
  it("has no execute-api endpoint", () => {
    expect(onlyOf(main, "AWS::ApiGatewayV2::Api").DisableExecuteApiEndpoint).toBe(true);
  });

  it("admits on every route only requests carrying the origin header, checked by the origin check", () => {
    const routes = resourcesOf(main, "AWS::ApiGatewayV2::Route").map(([, route]) => route.Properties ?? {});
    expect(routes.length).toBeGreaterThan(0);
    const authorizerId = resourcesOf(main, "AWS::ApiGatewayV2::Authorizer")[0]?.[0];
    for (const route of routes) {
      expect(route).toMatchObject({ AuthorizationType: "CUSTOM", AuthorizerId: { Ref: authorizerId } });
    }
    expect(onlyOf(main, "AWS::ApiGatewayV2::Authorizer")).toMatchObject({
      AuthorizerType: "REQUEST",
      IdentitySource: [`$request.header.${ORIGIN_VERIFY_HEADER}`],
      EnableSimpleResponses: true,
    });
  });
});

describe("the origin check", () => {
  /** Runs the inline source as Lambda would, with `expected` in its environment, on one header value. */
  function admits(expected: string | undefined, given: string | undefined): boolean {
    const script = `
      const module = { exports: {} };
      new Function("module", "exports", "require", process.argv[1])(module, module.exports, require);
      const headers = process.argv[2] === "" ? {} : { "${ORIGIN_VERIFY_HEADER}": process.argv[2] };
      module.exports.handler({ headers }).then((answer) => process.stdout.write(JSON.stringify(answer)));
    `;
    const environment = {
      PATH: process.env.PATH ?? "",
      ...(expected === undefined ? {} : { ORIGIN_VERIFY: expected }),
    };
    const output = execFileSync(process.execPath, ["-e", script, ORIGIN_CHECK_SOURCE, given ?? ""], {
      env: environment,
      encoding: "utf8",
    });
    return (JSON.parse(output) as { isAuthorized: boolean }).isAuthorized;
  }

  it("admits the header CloudFront sends, and nothing else", () => {
    expect(admits("s3cret-value", "s3cret-value")).toBe(true);
    expect(admits("s3cret-value", "s3cret-valuf")).toBe(false);
    expect(admits("s3cret-value", "s3cret")).toBe(false);
    expect(admits("s3cret-value", undefined)).toBe(false);
  });

  it("admits nothing when it was given no secret", () => {
    expect(admits(undefined, undefined)).toBe(false);
    expect(admits("", "")).toBe(false);
  });
});
