import { Aws, CfnRule, Fn } from "aws-cdk-lib";
import {
  ApiMapping,
  DomainName,
  EndpointType,
  type HttpApi,
  type HttpStage,
  IpAddressType,
  SecurityPolicy,
} from "aws-cdk-lib/aws-apigatewayv2";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import { AaaaRecord, ARecord, type ARecordProps, HostedZone, RecordTarget } from "aws-cdk-lib/aws-route53";
import { ApiGatewayv2DomainProperties } from "aws-cdk-lib/aws-route53-targets";
import { Construct } from "constructs";
import type { CustomDomainConfig } from "./config.ts";
import { certificateLocation } from "./rules/certificate-region.ts";

export interface CustomDomainProps extends CustomDomainConfig {
  readonly api: HttpApi;
  readonly stage: HttpStage;
}

/**
 * The A and AAAA records (`<id>`, `<id>Ipv6`) that make `name`, in the Route 53 zone `zoneId`, an alias
 * of the API's `domain`: it answers on IPv4 and IPv6. `options` adds what the records route by.
 */
export function aliasRecords(
  scope: Construct,
  id: string,
  zoneId: string,
  name: string,
  domain: DomainName,
  options: Pick<ARecordProps, "region" | "setIdentifier" | "healthCheck"> = {},
): void {
  const record: ARecordProps = {
    zone: HostedZone.fromHostedZoneId(scope, "HostedZone", zoneId),
    // Fully qualified (trailing dot): the zone's name is then not needed, and Route 53 itself refuses a
    // name outside the zone.
    recordName: `${name}.`,
    target: RecordTarget.fromAlias(
      new ApiGatewayv2DomainProperties(domain.regionalDomainName, domain.regionalHostedZoneId),
    ),
    ...options,
  };
  new ARecord(scope, id, record);
  new AaaaRecord(scope, `${id}Ipv6`, record);
}

/**
 * `https://<domainName>/plants` in front of the API: a regional custom domain with the given ACM
 * certificate, mapped to the stage at the root, answering on IPv4 and IPv6, and with a hosted zone, the
 * A and AAAA alias records that point to it. The API's execute-api endpoint is closed beside it
 * (infra/plant-store-stack.ts).
 */
export class CustomDomain extends Construct {
  readonly domainName: DomainName;
  /** `https://<domainName>/plants`: the domain's root is the `$default` stage. */
  readonly plantsUrl: string;
  /**
   * Without a hosted zone, what the user's DNS record for the domain must point to (a CNAME, or an alias
   * where the DNS service has them); `undefined` when the stack creates the record.
   */
  readonly dnsTargetToSet: string | undefined;

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    this.assertCertificateLocation(props.certificateArn);

    this.domainName = new DomainName(this, "DomainName", {
      domainName: props.domainName,
      certificate: Certificate.fromCertificateArn(this, "Certificate", props.certificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
      ipAddressType: IpAddressType.DUAL_STACK,
    });
    new ApiMapping(this, "ApiMapping", { api: props.api, domainName: this.domainName, stage: props.stage });
    this.plantsUrl = `https://${props.domainName}/plants`;

    const { hostedZoneId } = props;
    this.dnsTargetToSet = hostedZoneId === undefined ? this.domainName.regionalDomainName : undefined;
    if (hostedZoneId) aliasRecords(this, "AliasRecord", hostedZoneId, props.domainName, this.domainName);
  }

  /**
   * A CloudFormation Rule: a certificate of another Region or account stops the deploy before anything is
   * created, instead of failing the domain after the rest of the stack (infra/rules/certificate-region.ts).
   */
  private assertCertificateLocation(certificateArn: string): void {
    const location = certificateLocation(certificateArn);
    if (location === undefined) throw new Error(`not an ACM certificate ARN: ${certificateArn}`);
    new CfnRule(this, "CertificateInStackRegion", {
      assertions: [
        {
          assert: Fn.conditionEquals(Aws.REGION, location.region),
          assertDescription:
            `The custom domain's certificate is in ${location.region}: deploy the stack to ${location.region}, ` +
            "or give -c certificateArn= a certificate of the stack's Region",
        },
        {
          assert: Fn.conditionEquals(Aws.ACCOUNT_ID, location.account),
          assertDescription:
            `The custom domain's certificate belongs to account ${location.account}: deploy the stack there, ` +
            "or give -c certificateArn= a certificate of the stack's account",
        },
      ],
    });
  }
}
