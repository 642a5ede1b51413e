import { DEFAULT_STACK_NAME, WRITE_SCOPE } from "./stack-outputs.ts";

/** Tokens come from the Cognito user pool the stack creates. */
export interface CognitoIssuerConfig {
  readonly kind: "cognito";
  /** Prefix of the Cognito domain; by default derived from the stack name and the stack's unique id. */
  readonly domainPrefix: string | undefined;
}

/** Tokens come from an OIDC issuer the user brings; the stack creates no user pool. */
export interface ExternalIssuerConfig {
  readonly kind: "external";
  readonly issuer: string;
  readonly audience: string | undefined;
  readonly clientIds: string | undefined;
  readonly jwksUrl: string | undefined;
  readonly requiredScope: string;
}

export interface PlantStoreConfig {
  readonly tokenIssuer: CognitoIssuerConfig | ExternalIssuerConfig;
  readonly memorySizeMb: number;
  /** `undefined` leaves the function on the account's unreserved pool (for accounts with a low quota). */
  readonly reservedConcurrency: number | undefined;
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  /** `undefined` turns CORS off: the API is meant for servers, not browsers. */
  readonly corsAllowOrigins: string[] | undefined;
  /** `undefined` creates no SNS topic; the alarms still exist and show in the console. */
  readonly alarmEmail: string | undefined;
}

export const CONTEXT_DEFAULTS = {
  stackName: DEFAULT_STACK_NAME,
  memorySize: 256,
  reservedConcurrency: 50,
  throttleRateLimit: 50,
  throttleBurstLimit: 100,
  requiredScope: WRITE_SCOPE,
} as const;

/** Reads one context value; `app.node.tryGetContext` fits. */
export type ContextReader = (key: string) => unknown;

export function readStackName(readContext: ContextReader): string {
  const stackName = optionalString(readContext, "stackName") ?? CONTEXT_DEFAULTS.stackName;
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new Error(`Context "stackName" must be a CloudFormation stack name, got "${stackName}"`);
  }
  return stackName;
}

export function readPlantStoreConfig(readContext: ContextReader): PlantStoreConfig {
  const corsAllowOrigins = optionalString(readContext, "corsAllowOrigins");
  const alarmEmail = optionalString(readContext, "alarmEmail");
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(alarmEmail)) {
    throw new Error(`Context "alarmEmail" must be an email address, got "${alarmEmail}"`);
  }
  return {
    tokenIssuer: readTokenIssuer(readContext),
    memorySizeMb: integerInRange(readContext, "memorySize", CONTEXT_DEFAULTS.memorySize, 128, 10_240),
    reservedConcurrency:
      readContext("reservedConcurrency") === "none"
        ? undefined
        : integerInRange(readContext, "reservedConcurrency", CONTEXT_DEFAULTS.reservedConcurrency, 1, 10_000),
    throttleRateLimit: integerInRange(
      readContext,
      "throttleRateLimit",
      CONTEXT_DEFAULTS.throttleRateLimit,
      1,
      10_000,
    ),
    throttleBurstLimit: integerInRange(
      readContext,
      "throttleBurstLimit",
      CONTEXT_DEFAULTS.throttleBurstLimit,
      1,
      5_000,
    ),
    corsAllowOrigins: corsAllowOrigins === undefined ? undefined : splitList(corsAllowOrigins),
    alarmEmail,
  };
}

function readTokenIssuer(readContext: ContextReader): CognitoIssuerConfig | ExternalIssuerConfig {
  const issuer = optionalString(readContext, "issuer");
  const audience = optionalString(readContext, "audience");
  const clientIds = optionalString(readContext, "clientIds");
  const jwksUrl = optionalString(readContext, "jwksUrl");
  const requiredScope = optionalString(readContext, "requiredScope");
  const domainPrefix = optionalString(readContext, "cognitoDomainPrefix");

  if (issuer === undefined) {
    const externalOnly = { audience, clientIds, jwksUrl, requiredScope };
    const stray = Object.entries(externalOnly).find(([, value]) => value !== undefined);
    if (stray) {
      throw new Error(`Context "${stray[0]}" only applies with "issuer" (bring your own OIDC issuer)`);
    }
    if (domainPrefix !== undefined && !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(domainPrefix)) {
      throw new Error(`Context "cognitoDomainPrefix" must be lowercase letters, digits and hyphens`);
    }
    return { kind: "cognito", domainPrefix };
  }

  if (domainPrefix !== undefined) {
    throw new Error(`Context "cognitoDomainPrefix" does not apply with "issuer": no user pool is created`);
  }
  requireHttpsUrl("issuer", issuer);
  if (jwksUrl !== undefined) requireHttpsUrl("jwksUrl", jwksUrl);
  // The handler refuses to start without one of them: a token from the same issuer for another API must fail.
  if (audience === undefined && clientIds === undefined) {
    throw new Error(`Context "issuer" needs "audience" (checks aud) or "clientIds" (checks client_id)`);
  }
  return {
    kind: "external",
    issuer,
    audience,
    clientIds,
    jwksUrl,
    requiredScope: requiredScope ?? CONTEXT_DEFAULTS.requiredScope,
  };
}

function optionalString(readContext: ContextReader, key: string): string | undefined {
  const value = readContext(key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Error(`Context "${key}" must be a string`);
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** Context from `-c key=value` arrives as a string, from cdk.json possibly as a number. */
function integerInRange(
  readContext: ContextReader,
  key: string,
  defaultValue: number,
  min: number,
  max: number,
): number {
  const value = readContext(key);
  if (value === undefined) return defaultValue;
  const parsed = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof parsed !== "number" || !Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new Error(
      `Context "${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

function splitList(commaSeparated: string): string[] {
  return commaSeparated
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function requireHttpsUrl(key: string, value: string): void {
  if (!URL.canParse(value) || new URL(value).protocol !== "https:") {
    throw new Error(`Context "${key}" must be an https URL, got "${value}"`);
  }
}
