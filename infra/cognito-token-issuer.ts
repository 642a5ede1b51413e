import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import {
  AccountRecovery,
  FeaturePlan,
  type IUserPool,
  type IUserPoolClient,
  OAuthScope,
  ResourceServerScope,
  UserPool,
  UserPoolClient,
} from "aws-cdk-lib/aws-cognito";
import { Construct } from "constructs";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import type { CognitoIssuerConfig, ExternalIssuerConfig } from "./issuer-config.ts";
import { withoutReservedWords } from "./rules/cognito-domain-prefix.ts";
import { OUTPUT_KEYS } from "./stack-outputs.ts";

/**
 * The scope the handler requires by default, as Cognito builds it: `<resource server identifier>/<scope
 * name>`, so that the pool's tokens carry exactly DEFAULT_REQUIRED_SCOPE.
 */
const [RESOURCE_SERVER_IDENTIFIER = "", WRITE_SCOPE_NAME = ""] = DEFAULT_REQUIRED_SCOPE.split("/");

/** Retained on stack deletion and replacement, deleted when its own first create rolls back. */
const RETAINED = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;

/**
 * A user pool that exists only to issue machine tokens: one confidential app client that may use the
 * client-credentials grant for the scope the handler requires (DEFAULT_REQUIRED_SCOPE). Nobody signs up or
 * signs in. The pool, its client, resource server and domain outlive the stack (but not their own failed
 * first create), so that a recreated stack serves the same issuer, client id and secret: docs/DEPLOY.md,
 * "Redeploy onto the retained table and user pool".
 */
export class CognitoTokenIssuer extends Construct {
  readonly userPool: IUserPool;
  readonly client: IUserPoolClient;
  /** `https://cognito-idp.<region>.amazonaws.com/<poolId>`, the `iss` of its tokens. */
  readonly issuerUrl: string;
  readonly tokenEndpoint: string;
  /** The pool as the handler trusts it: as it would trust an issuer the user brings. */
  readonly trustedIssuer: ExternalIssuerConfig;

  /** With `retained` (`-c userPoolId=…`) the retained issuer is re-attached, and nothing of Cognito made. */
  constructor(scope: Construct, id: string, props: CognitoIssuerConfig) {
    super(scope, id);
    const stack = Stack.of(this);

    if (props.retained === undefined) {
      const userPool = this.createUserPool();
      this.userPool = userPool;
      this.client = addMachineClient(userPool);
      const domain = userPool.addDomain("Domain", {
        cognitoDomain: { domainPrefix: props.domainPrefix ?? derivedDomainPrefix(this) },
      });
      domain.applyRemovalPolicy(RETAINED);
      this.tokenEndpoint = `${domain.baseUrl()}/oauth2/token`;
    } else {
      const { userPoolId, clientId, domainPrefix } = props.retained;
      this.userPool = UserPool.fromUserPoolId(this, "UserPool", userPoolId);
      this.client = UserPoolClient.fromUserPoolClientId(this, "MachineClient", clientId);
      this.tokenEndpoint = `https://${domainPrefix}.auth.${stack.region}.amazoncognito.com/oauth2/token`;
    }
    // Built by hand because the handler compares it with `iss` byte for byte.
    this.issuerUrl = `https://cognito-idp.${stack.region}.${stack.urlSuffix}/${this.userPool.userPoolId}`;
    this.trustedIssuer = {
      kind: "external",
      issuer: this.issuerUrl,
      audience: undefined,
      // Cognito client-credentials access tokens carry no aud; client_id names the app client.
      clientIds: this.client.userPoolClientId,
      jwksUrl: undefined,
      keySetFile: undefined,
      requiredScope: DEFAULT_REQUIRED_SCOPE,
    };
  }

  /** A pool without users or sign-in: it only holds the machine client. */
  private createUserPool(): UserPool {
    const userPool = new UserPool(this, "UserPool", {
      selfSignUpEnabled: false,
      accountRecovery: AccountRecovery.NONE,
      // Essentials is the default plan; client-credentials grants are billed per token request on any plan.
      featurePlan: FeaturePlan.ESSENTIALS,
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
      },
      // Kept when the stack is deleted, so that a recreate keeps the issuer and the client; deleted with its
      // own failed first create, where nobody holds its client yet and it would bill the client monthly.
      removalPolicy: RETAINED,
    });
    Validations.of(userPool).acknowledge(
      {
        id: "AwsSolutions-COG2",
        reason:
          "The pool has no users and no sign-in flow (no self sign-up, the only client is limited to the " +
          "client-credentials grant); MFA applies to user sign-in only.",
      },
      {
        id: "AwsSolutions-COG8",
        reason:
          "Plus-plan threat protection analyses user sign-ins; this pool only issues client-credentials " +
          "tokens, so Plus would add cost and no protection.",
      },
    );
    return userPool;
  }
}

/** How to get a token from `issuer`, as outputs of `stack`; the client secret itself is never an output. */
export function addTokenIssuerOutputs(stack: Stack, issuer: CognitoTokenIssuer): void {
  const { userPoolId } = issuer.userPool;
  const clientId = issuer.client.userPoolClientId;
  new CfnOutput(stack, OUTPUT_KEYS.tokenEndpoint, { value: issuer.tokenEndpoint });
  new CfnOutput(stack, OUTPUT_KEYS.clientId, { value: clientId });
  new CfnOutput(stack, OUTPUT_KEYS.userPoolId, { value: userPoolId });
  new CfnOutput(stack, OUTPUT_KEYS.clientSecretCommand, {
    value:
      `aws cognito-idp describe-user-pool-client --region ${stack.region} --user-pool-id ${userPoolId} ` +
      `--client-id ${clientId} --query UserPoolClient.ClientSecret --output text`,
    description: "Prints the app client's secret (the secret itself is never an output)",
  });
}

/** The one confidential client: the client-credentials grant for the write scope, nothing else. */
function addMachineClient(userPool: UserPool): UserPoolClient {
  const writeScope = new ResourceServerScope({
    scopeName: WRITE_SCOPE_NAME,
    scopeDescription: "Create plants",
  });
  const resourceServer = userPool.addResourceServer("PlantsResourceServer", {
    identifier: RESOURCE_SERVER_IDENTIFIER,
    userPoolResourceServerName: "Plant Store API",
    scopes: [writeScope],
  });
  resourceServer.applyRemovalPolicy(RETAINED);

  const client = userPool.addClient("MachineClient", {
    generateSecret: true,
    // A non-empty authFlows makes CDK list the flows explicitly; with every user flow off only
    // ALLOW_REFRESH_TOKEN_AUTH remains, and the client-credentials grant never issues refresh tokens.
    authFlows: {
      userSrp: false,
      custom: false,
      userPassword: false,
      adminUserPassword: false,
      user: false,
    },
    oAuth: {
      flows: { clientCredentials: true },
      scopes: [OAuthScope.resourceServer(resourceServer, writeScope)],
    },
    accessTokenValidity: Duration.hours(1),
    enableTokenRevocation: true,
    preventUserExistenceErrors: true,
  });
  client.applyRemovalPolicy(RETAINED);
  return client;
}

/**
 * `<stack name>-<first block of the stack's UUID>`: unique per deployed stack, stable across updates and,
 * unlike the account id, reveals nothing. Cognito forbids "aws", "amazon" and "cognito" in prefixes: they
 * are removed until none is left (infra/rules/cognito-domain-prefix.ts checks the result at synth).
 */
function derivedDomainPrefix(scope: Construct): string {
  const stackNamePart = stackNamePrefixPart(Stack.of(scope).stackName);
  const stackUuid = Fn.select(2, Fn.split("/", Stack.of(scope).stackId));
  const stackUuidFirstBlock = Fn.select(0, Fn.split("-", stackUuid));
  return Fn.join("-", [stackNamePart || "plant-store", stackUuidFirstBlock]);
}

/** The stack name as a domain prefix's first part: lowercase, reserved words removed, at most 40 characters. */
export function stackNamePrefixPart(stackName: string): string {
  const words = withoutReservedWords(stackName.toLowerCase().replace(/[^a-z0-9]+/g, "-"));
  return words
    .replace(/-+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
}
