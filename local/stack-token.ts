/**
 * `npm run token -- --stack [name]`: a `plants/write` access token for a deployed stack's Cognito app
 * client, fetched with the caller's default AWS credentials: the stack outputs name the pool, client and
 * token endpoint; the secret is read from Cognito.
 */
import type { Output } from "@aws-sdk/client-cloudformation";
import { DEFAULT_STACK_NAME, OUTPUT_KEYS } from "../infra/stack-outputs.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import { isObject } from "../lambda/is-object.ts";

/** What a deployed stack's outputs say about getting a token. */
export interface TokenIssuerOutputs {
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly userPoolId: string;
}

export const NO_REGION_MESSAGE =
  "no AWS region: set AWS_REGION (or a region in your AWS_PROFILE), or run `aws configure`";
export const NO_CREDENTIALS_MESSAGE =
  "no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run " +
  "`aws configure` (or `aws sso login`)";

export async function fetchStackToken(stackName = DEFAULT_STACK_NAME, region?: string): Promise<string> {
  // The SDK's notice that its releases after January 2027 need Node 22 is about upgrading the SDK, which
  // this project pins; on a developer's Node 20 it would bury the one line this command prints.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  // Loaded on use: the AWS SDK would slow every local token down.
  const [cloudFormationSdk, cognitoSdk] = await Promise.all([
    import("@aws-sdk/client-cloudformation"),
    import("@aws-sdk/client-cognito-identity-provider"),
  ]);
  const clientConfig = region === undefined ? {} : { region };
  const cloudFormation = new cloudFormationSdk.CloudFormationClient(clientConfig);
  await requireRegionAndCredentials(cloudFormation.config);
  const described = await cloudFormation
    .send(new cloudFormationSdk.DescribeStacksCommand({ StackName: stackName }))
    .catch((error: Error) => {
      if (!/does not exist/.test(error.message)) throw error;
      throw new Error(
        `Stack "${stackName}" does not exist in this account and region; deploy it (npm run deploy) or ` +
          `pass the right --stack name and AWS region`,
      );
    });
  const issuer = tokenIssuerOutputsFrom(stackName, described.Stacks?.[0]?.Outputs ?? []);
  const { UserPoolClient } = await new cognitoSdk.CognitoIdentityProviderClient(clientConfig).send(
    new cognitoSdk.DescribeUserPoolClientCommand({
      UserPoolId: issuer.userPoolId,
      ClientId: issuer.clientId,
    }),
  );
  if (!UserPoolClient?.ClientSecret) {
    throw new Error(`App client ${issuer.clientId} of user pool ${issuer.userPoolId} has no secret`);
  }
  const { url, init } = buildTokenRequest(issuer, UserPoolClient.ClientSecret);
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return accessTokenFrom(response.status, await response.text());
}

/**
 * Resolves the region and the credentials before any call, so that their absence reads as what to do
 * rather than the SDK's "Region is missing" or "Could not load credentials from any providers".
 */
export async function requireRegionAndCredentials(config: {
  region: () => Promise<string>;
  credentials: () => Promise<unknown>;
}): Promise<void> {
  await config.region().catch(() => {
    throw new Error(NO_REGION_MESSAGE);
  });
  await config.credentials().catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    // Any other failure (an expired SSO session, a broken profile) says more than the hint would.
    if (/could not load credentials from any providers/i.test(message))
      throw new Error(NO_CREDENTIALS_MESSAGE);
    throw new Error(`AWS credentials could not be loaded: ${message}`);
  });
}

/** Picks the token-issuer outputs, or explains why the stack cannot hand out tokens. */
export function tokenIssuerOutputsFrom(stackName: string, outputs: readonly Output[]): TokenIssuerOutputs {
  const byKey = new Map(outputs.map((output) => [output.OutputKey, output.OutputValue]));
  const keys = [OUTPUT_KEYS.tokenEndpoint, OUTPUT_KEYS.clientId, OUTPUT_KEYS.userPoolId];
  const [tokenEndpoint, clientId, userPoolId] = keys.map((key) => byKey.get(key));
  if (tokenEndpoint && clientId && userPoolId) return { tokenEndpoint, clientId, userPoolId };
  const externalIssuer = byKey.get(OUTPUT_KEYS.jwtIssuer);
  if (!tokenEndpoint && !clientId && !userPoolId && externalIssuer) {
    throw new Error(
      `Stack "${stackName}" verifies tokens from your own issuer ${externalIssuer} and has no user pool; ` +
        `get a token from that issuer`,
    );
  }
  const missing = keys.filter((key) => !byKey.get(key));
  throw new Error(
    `Stack "${stackName}" lacks the outputs ${missing.join(", ")}; is it a Plant Store stack, fully deployed?`,
  );
}

/** The client-credentials grant (RFC 6749 §4.4) with the client authenticated by HTTP Basic (§2.3.1). */
export function buildTokenRequest(
  issuer: TokenIssuerOutputs,
  clientSecret: string,
): { url: string; init: RequestInit & { headers: Record<string, string>; body: string } } {
  const credentials = `${encodeURIComponent(issuer.clientId)}:${encodeURIComponent(clientSecret)}`;
  return {
    url: issuer.tokenEndpoint,
    init: {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(credentials).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        scope: DEFAULT_REQUIRED_SCOPE,
      }).toString(),
    },
  };
}

/** The access token from a token endpoint answer, or an error that names the OAuth error code. */
export function accessTokenFrom(status: number, body: string): string {
  let fields: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(body);
    if (isObject(parsed)) fields = parsed;
  } catch {}
  if (status === 200 && typeof fields.access_token === "string" && fields.access_token !== "") {
    return fields.access_token;
  }
  const reason = typeof fields.error === "string" ? fields.error : body.slice(0, 200) || "empty body";
  throw new Error(`Token endpoint answered ${status} without an access token: ${reason}`);
}
