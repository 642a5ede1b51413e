import {
  ApiMapping,
  DomainName,
  EndpointType,
  type HttpApi,
  type HttpStage,
  SecurityPolicy,
} from "aws-cdk-lib/aws-apigatewayv2";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import { ARecord, HostedZone, RecordTarget } from "aws-cdk-lib/aws-route53";
import { ApiGatewayv2DomainProperties } from "aws-cdk-lib/aws-route53-targets";
import { Construct } from "constructs";
import type { CustomDomainConfig } from "./config.ts";

export interface CustomDomainProps {
  readonly config: CustomDomainConfig;
  readonly api: HttpApi;
  readonly stage: HttpStage;
}

/**
 * `https://<domainName>/plants` in front of the API: a regional custom domain with the given ACM
 * certificate, mapped to the stage at the root, and with a hosted zone, the alias record that points to it.
 */
export class CustomDomain extends Construct {
  readonly domainName: DomainName;
  /** What the DNS record for the domain must point to (an alias, or a CNAME where aliases do not exist). */
  readonly dnsTarget: string;

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    const { config } = props;

    this.domainName = new DomainName(this, "DomainName", {
      domainName: config.domainName,
      certificate: Certificate.fromCertificateArn(this, "Certificate", config.certificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new ApiMapping(this, "ApiMapping", { api: props.api, domainName: this.domainName, stage: props.stage });
    this.dnsTarget = this.domainName.regionalDomainName;

    if (config.hostedZoneId !== undefined) {
      new ARecord(this, "AliasRecord", {
        zone: HostedZone.fromHostedZoneId(this, "HostedZone", config.hostedZoneId),
        // Fully qualified (trailing dot): the zone's name is then not needed, and Route 53 itself refuses
        // a name outside the zone.
        recordName: `${config.domainName}.`,
        target: RecordTarget.fromAlias(
          new ApiGatewayv2DomainProperties(
            this.domainName.regionalDomainName,
            this.domainName.regionalHostedZoneId,
          ),
        ),
      });
    }
  }
}
