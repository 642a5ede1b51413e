import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import { CfnWebACL } from "aws-cdk-lib/aws-wafv2";
import type { Construct } from "constructs";

/** The Region a CloudFront distribution's web ACL must be in (WAF's CLOUDFRONT scope). */
export const CLOUDFRONT_WEB_ACL_REGION = "us-east-1";

/** How long WAF counts each address's requests for the rate-based rule. */
const RATE_WINDOW_SECONDS = 60;
/** WAF's smallest rate limit per window. */
const WAF_MINIMUM_RATE_LIMIT = 10;

export interface EdgeWebAclStackProps extends StackProps {
  /** The stage's steady rate (requests per second) that all callers share. */
  readonly stageRateLimit: number;
}

/**
 * A tenth of the stage's shared rate per client address, per minute: over a minute one source can take at
 * most a tenth of what the stage serves, so a single stranger cannot starve the callers for long. WAF
 * counts no window shorter than a minute: within one, an address can still spend its share at once (the
 * stage's burst and a few seconds of its rate). Never under WAF's minimum limit.
 */
export function perAddressLimit(stageRateLimit: number): number {
  return Math.max(WAF_MINIMUM_RATE_LIMIT, Math.floor((stageRateLimit * RATE_WINDOW_SECONDS) / 10));
}

/** WAF's metrics and sampled requests, under `metricName`. */
function visibility(metricName: string): CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true };
}

/** An AWS managed rule group, with the rules named in `countOnly` counted instead of blocking. */
function managedRuleGroup(name: string, priority: number, countOnly: string[] = []): CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    overrideAction: { none: {} },
    statement: {
      managedRuleGroupStatement: {
        vendorName: "AWS",
        name,
        ruleActionOverrides: countOnly.map((rule) => ({ name: rule, actionToUse: { count: {} } })),
      },
    },
    visibilityConfig: visibility(name),
  };
}

/**
 * The web ACL of the edge protection (`-c edgeProtection=waf`), in its own stack in us-east-1, where WAF
 * keeps every web ACL a CloudFront distribution uses; the Plant Store stack's distribution refers to it
 * across Regions (infra/edge-protection.ts). Requests pass unless a rule blocks them: an address over
 * its share of the rate, and what AWS's managed rule groups catch.
 */
export class EdgeWebAclStack extends Stack {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: EdgeWebAclStackProps) {
    super(scope, id, props);
    this.webAcl = new CfnWebACL(this, "WebAcl", {
      scope: "CLOUDFRONT",
      description: "Plant Store - a share of the stage rate per client address, AWS managed rule groups",
      defaultAction: { allow: {} },
      visibilityConfig: visibility(`${this.stackName}-web-acl`),
      rules: [
        {
          name: "RateLimitPerAddress",
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              aggregateKeyType: "IP",
              limit: perAddressLimit(props.stageRateLimit),
              evaluationWindowSec: RATE_WINDOW_SECONDS,
            },
          },
          visibilityConfig: visibility("RateLimitPerAddress"),
        },
        managedRuleGroup("AWSManagedRulesAmazonIpReputationList", 1),
        // Counted, not blocked: a body up to the API's own 16 KiB limit (it answers 413 beyond), and API
        // clients that send no User-Agent.
        managedRuleGroup("AWSManagedRulesCommonRuleSet", 2, ["SizeRestrictions_BODY", "NoUserAgent_HEADER"]),
        managedRuleGroup("AWSManagedRulesKnownBadInputsRuleSet", 3),
      ],
    });
    new CfnOutput(this, "WebAclArn", { value: this.webAcl.attrArn });
  }
}
