import { Duration, RemovalPolicy, Validations } from "aws-cdk-lib";
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { HttpOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import { Code, Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import { ORIGIN_CHECK_SOURCE, ORIGIN_VERIFY_HEADER, ORIGIN_VERIFY_VARIABLE } from "./origin-check.ts";
import { ownFunction } from "./own-function.ts";

export interface EdgeProtectionProps {
  /** The API's custom domain: CloudFront's origin, the API's only endpoint (execute-api is closed). */
  readonly originDomainName: string;
  /** The ARN of the CLOUDFRONT-scope web ACL in us-east-1 (infra/edge-web-acl-stack.ts). */
  readonly webAclArn: string;
}

/**
 * `-c edgeProtection=waf`: CloudFront in front of the API with the AWS WAF web ACL, and the API closed to
 * everything else. HTTP APIs take no web ACL and no resource policy; what closes this one: its execute-api
 * endpoint is off (only the custom domain answers), and every route has an authorizer that admits a
 * request only with the secret header CloudFront adds on its way to the origin. A request sent to the
 * domain directly is refused by API Gateway (401 without the header, 403 with a wrong one) before the
 * function runs. The secret is generated at the first deploy; anyone who may read the distribution's or
 * the authorizer's configuration in the account can read it.
 */
export class EdgeProtection extends Construct {
  readonly authorizer: HttpLambdaAuthorizer;
  /** `https://<distribution>.cloudfront.net/plants`: where callers POST. */
  readonly plantsUrl: string;

  constructor(scope: Construct, id: string, props: EdgeProtectionProps) {
    super(scope, id);
    const originSecret = new Secret(this, "OriginSecret", {
      description: "Plant Store: the header value CloudFront adds and the API's origin check requires",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(originSecret).acknowledge({
      id: "AwsSolutions-SMG4",
      reason:
        "The origin header's value lives in CloudFront's origin configuration and the origin check's " +
        "environment, both set from this secret at deploy; a rotation without a deploy would lock CloudFront " +
        "out. Redeploying after replacing the secret's value rotates it.",
    });
    const secretValue = originSecret.secretValue.unsafeUnwrap();

    this.authorizer = new HttpLambdaAuthorizer("OriginCheck", this.createOriginCheck(secretValue), {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: [`$request.header.${ORIGIN_VERIFY_HEADER}`],
      // A decision per header value, cached: the check runs about once per 5 minutes, not per request.
      resultsCacheTtl: Duration.minutes(5),
    });

    const distribution = new Distribution(this, "Distribution", {
      comment: "Plant Store: POST /plants behind AWS WAF",
      webAclId: props.webAclArn,
      priceClass: PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: new HttpOrigin(props.originDomainName, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
          customHeaders: { [ORIGIN_VERIFY_HEADER]: secretValue },
        }),
        // POST needs every method; nothing of an API's answers is cached.
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Authorization, Content-Type and the rest pass; Host becomes the origin's, which the domain needs.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      },
    });
    Validations.of(distribution).acknowledge(
      {
        id: "AwsSolutions-CFR1",
        reason: "The API serves callers wherever they are; the web ACL limits each address instead.",
      },
      {
        id: "AwsSolutions-CFR3",
        reason:
          "Every request that reaches the API is in the stage's access log; WAF's metrics and sampled " +
          "requests show what the web ACL blocked. A log bucket would add cost for little more.",
      },
      {
        id: "AwsSolutions-CFR4",
        reason:
          "The distribution's default cloudfront.net certificate allows no minimum TLS version to be set; " +
          "the origin connection is TLS 1.2 or later.",
      },
    );
    this.plantsUrl = `https://${distribution.distributionDomainName}/plants`;
  }

  /** The authorizer's function: compares the header with the secret in constant time (./origin-check.ts). */
  private createOriginCheck(secretValue: string): LambdaFunction {
    const roleDescription = "Plant Store origin check: write its log group, nothing else";
    return ownFunction(this, "OriginCheck", roleDescription, [], (common) => {
      return new LambdaFunction(this, "OriginCheck", {
        ...common,
        memorySize: 128,
        timeout: Duration.seconds(3),
        handler: "index.handler",
        code: Code.fromInline(ORIGIN_CHECK_SOURCE),
        description: "Admits a request to the API only with the header CloudFront adds",
        environment: { [ORIGIN_VERIFY_VARIABLE]: secretValue },
      });
    });
  }
}
