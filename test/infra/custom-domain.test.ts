import { describe, expect, it } from "vitest";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { onlyLogicalId, onlyResource, synthesizePlantStore } from "../support/synthesize.ts";

const { template, nagFindings } = synthesizePlantStore({
  domainName: "api.plants.example.com",
  certificateArn: "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789",
  hostedZoneId: "Z0123456789ABCDEFGHIJ",
});

describe("with a custom domain in a Route 53 hosted zone", () => {
  const domainNameId = onlyLogicalId(template, "AWS::ApiGatewayV2::DomainName");

  it("creates the A and AAAA alias records in the zone, pointing at the API's dual-stack regional domain", () => {
    const records = Object.values(template.findResources("AWS::Route53::RecordSet")).map(
      ({ Properties }) => Properties,
    );
    expect(records.map((record) => record.Type).sort()).toEqual(["A", "AAAA"]);
    for (const record of records) {
      expect(record).toEqual({
        HostedZoneId: "Z0123456789ABCDEFGHIJ",
        Name: "api.plants.example.com.",
        Type: record.Type,
        AliasTarget: {
          DNSName: { "Fn::GetAtt": [domainNameId, "RegionalDomainName"] },
          HostedZoneId: { "Fn::GetAtt": [domainNameId, "RegionalHostedZoneId"] },
        },
      });
    }
    expect(onlyResource(template, "AWS::ApiGatewayV2::DomainName").DomainNameConfigurations).toEqual([
      expect.objectContaining({ IpAddressType: "dualstack" }),
    ]);
  });

  it("closes the API's execute-api endpoint", () => {
    expect(onlyResource(template, "AWS::ApiGatewayV2::Api").DisableExecuteApiEndpoint).toBe(true);
  });

  it("names the custom URL, and no DNS target to set by hand", () => {
    template.hasOutput(OUTPUT_KEYS.apiUrl, { Value: "https://api.plants.example.com/plants" });
    expect(Object.keys(template.findOutputs("*"))).not.toContain(OUTPUT_KEYS.customDomainTarget);
  });

  it("keeps the Cognito issuer and the canary rollout", () => {
    template.resourceCountIs("AWS::Cognito::UserPool", 1);
    template.hasResourceProperties("AWS::CodeDeploy::DeploymentGroup", {
      DeploymentConfigName: "CodeDeployDefault.LambdaCanary10Percent5Minutes",
    });
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("reports no unacknowledged error or warning", () => {
    expect(nagFindings).toEqual([]);
  });
});
