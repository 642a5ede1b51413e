import { type App, Tags, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { describeRoutes } from "../lambda/http/routes.ts";
import {
  ContextError,
  type PlantStoreConfig,
  readMultiRegionConfig,
  readPlantStoreConfig,
  readStackName,
  refuseUnknownContextKeys,
  STACK_TAG,
} from "./config.ts";
import { CLOUDFRONT_WEB_ACL_REGION, EdgeWebAclStack } from "./edge-web-acl-stack.ts";
import { addMultiRegionPlantStore } from "./multi-region/multi-region-app.ts";
import { PlantStoreStack } from "./plant-store-stack.ts";
import { certificateLocation } from "./rules/certificate-region.ts";
import { DeployRulesPlugin } from "./rules/plugin.ts";

/**
 * With `-c edgeProtection=waf`, the web ACL's stack in us-east-1 (CloudFront's web ACLs live there), and
 * the environment of the Plant Store stack: a reference across Regions needs both stacks' accounts and
 * Regions at synth, and the custom domain's certificate names them (the stack must be in its Region).
 */
function addEdgeWebAcl(app: App, stackName: string, config: PlantStoreConfig) {
  // readPlantStoreConfig refuses edge protection without a custom domain (an ARN it checked).
  const domain = config.customDomain;
  const location = domain && certificateLocation(domain.certificateArn);
  if (domain === undefined || location === undefined) throw new Error("edge protection needs the domain");
  const webAclStackName = `${stackName}-EdgeWebAcl`;
  // WAF's limit on the web ACL's metric name, `<its stack's name>-web-acl`: 128 characters.
  if (`${webAclStackName}-web-acl`.length > 128) {
    throw new ContextError(
      `Context "stackName" is too long for "edgeProtection=waf": the web ACL's metric ` +
        `"<stackName>-EdgeWebAcl-web-acl" must be at most 128 characters`,
    );
  }
  const stack = new EdgeWebAclStack(app, webAclStackName, {
    description: "Plant Store: the AWS WAF web ACL of the CloudFront distribution in front of the API",
    env: { account: location.account, region: CLOUDFRONT_WEB_ACL_REGION },
    crossRegionReferences: true,
    terminationProtection: config.terminationProtection,
    stageRateLimit: config.throttleRateLimit,
  });
  const env = { account: location.account, region: location.region };
  return { stack, env, protection: { originDomainName: domain.domainName, webAclArn: stack.webAcl.attrArn } };
}

/**
 * Adds the Plant Store stack, configured from the app's context, and the cdk-nag checks to `app`. With
 * `-c regions=…` it adds the multi-Region stacks instead and returns the first Region's.
 */
export function addPlantStore(app: App): PlantStoreStack {
  refuseUnknownContextKeys(Object.keys(app.node.getAllContext()));
  const readContext = (key: string): unknown => app.node.tryGetContext(key);
  const stackName = readStackName(readContext);
  const config = readPlantStoreConfig(readContext);
  const multiRegion = readMultiRegionConfig(readContext);
  if (multiRegion !== undefined && config.edgeProtection === "waf") {
    throw new ContextError(
      '"edgeProtection=waf" is for one Region; with "regions", each Region is its own origin',
    );
  }
  const edge = config.edgeProtection === "waf" ? addEdgeWebAcl(app, stackName, config) : undefined;
  const [stack] =
    multiRegion === undefined
      ? [
          // No `env` unless the edge needs one: the stack is environment-agnostic, so synth needs no
          // credentials and no lookups.
          new PlantStoreStack(app, stackName, {
            description: `Plant Store: ${describeRoutes()} on API Gateway HTTP API, Lambda and DynamoDB`,
            config,
            terminationProtection: config.terminationProtection,
            ...(edge === undefined
              ? {}
              : { env: edge.env, crossRegionReferences: true, edgeProtection: edge.protection }),
          }),
        ]
      : addMultiRegionPlantStore(app, stackName, config, multiRegion);
  if (stack === undefined) throw new Error("no Region to serve");
  if (edge !== undefined) stack.addStackDependency(edge.stack);
  // On every stack of the app and every resource that takes tags. The stack tag stays on what outlives a
  // stack (the retained table and user pool), so they can be found by it after a destroy.
  // Dashboards are left out: their Tags property is newer than the CloudFormation schema cfn-lint 1.51.0
  // checks against (E3002), and a dashboard goes with the stack.
  for (const [key, value] of Object.entries({ [STACK_TAG]: stackName, ...config.tags })) {
    Tags.of(app).add(key, value, { excludeResourceTypes: ["AWS::CloudWatch::Dashboard"] });
  }
  // Any unacknowledged AwsSolutions finding, and any deploy-time rule broken (infra/rules/), fails
  // synthesis, so `cdk synth` and `cdk deploy` refuse it before anything is created.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new DeployRulesPlugin());
  return stack;
}
