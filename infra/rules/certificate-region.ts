import { type DeployRule, finding, knownParts, resourcesOfType, type Template } from "./deploy-rule.ts";

/** The Region and account of an ACM certificate ARN, `arn:<partition>:acm:<region>:<account>:certificate/<id>`. */
export function certificateLocation(arn: string): { region: string; account: string } | undefined {
  const [, , service, region, account] = arn.split(":");
  return service === "acm" && region && account ? { region, account } : undefined;
}

/** Whether a CloudFormation Rule of the template asserts that the stack's Region is `region`. */
function assertsRegion(template: Template, region: string): boolean {
  const expected = JSON.stringify({ "Fn::Equals": [{ Ref: "AWS::Region" }, region] });
  return Object.values(template.Rules ?? {}).some((rule) =>
    (rule.Assertions ?? []).some((assertion) => JSON.stringify(assertion.Assert) === expected),
  );
}

export const certificateRegion: DeployRule = {
  id: "PlantStore-CertificateRegion",
  behaviour:
    "A regional API Gateway custom domain needs an ACM certificate in the stack's own Region (and account). " +
    "API Gateway checks it only when CloudFormation creates the domain, after the table, the function and " +
    "the user pool were created, and the whole stack then rolls back.",
  documentation:
    "Amazon API Gateway Developer Guide, 'Setting up a regional custom domain name' (the certificate must " +
    "be in the same Region as the API); AWS CloudFormation User Guide, 'Rules' (checked before any resource " +
    "is created)",
  fix:
    "use a certificate ARN in the stack's Region (-c certificateArn=arn:aws:acm:<stack region>:…), and keep " +
    "the CloudFormation Rule that asserts it (infra/custom-domain.ts)",
  check({ template, region }) {
    return resourcesOfType(template, "AWS::ApiGatewayV2::DomainName").flatMap(([id, domain]) => {
      const configurations = (domain.Properties?.DomainNameConfigurations ?? []) as {
        CertificateArn?: unknown;
      }[];
      return configurations.flatMap(({ CertificateArn }) => {
        const arn = knownParts(CertificateArn)?.parts.join("");
        const location = arn === undefined ? undefined : certificateLocation(arn);
        if (location === undefined) return finding(id, "the certificate ARN is not one synth can read");
        if (region !== undefined && location.region !== region) {
          return finding(id, `the certificate is in ${location.region}, the stack deploys to ${region}`);
        }
        if (assertsRegion(template, location.region)) return [];
        return finding(
          id,
          `no CloudFormation Rule asserts that the stack's Region is ${location.region}, the certificate's`,
        );
      });
    });
  },
};
