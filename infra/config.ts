import { readFileSync } from "node:fs";
import { RegionInfo } from "aws-cdk-lib/region-info";
import { commaList } from "../lambda/comma-list.ts";
import { isTableName, TABLE_NAME_RULE } from "../lambda/config.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import { CORS_ORIGIN_RULE, isCorsOriginEntry } from "./cors.ts";
import { deliverableKeySet, KeySetRefusedError } from "./key-set-delivery/public-key-set.ts";
import { domainPrefixProblem } from "./rules/cognito-domain-prefix.ts";
import { DEFAULT_STACK_NAME } from "./stack-outputs.ts";

/** Tokens come from the Cognito user pool the stack creates. */
export interface CognitoIssuerConfig {
  readonly kind: "cognito";
  /** Prefix of the Cognito domain; by default derived from the stack name and the stack's unique id. */
  readonly domainPrefix: string | undefined;
  /**
   * With `-c userPoolId=…`: the pool, client and domain a destroyed stack retained, served again (the same
   * issuer, client id and secret); `undefined` creates them.
   */
  readonly retained: { userPoolId: string; clientId: string; domainPrefix: string } | undefined;
}

/** Tokens come from an OIDC issuer the user brings; the stack creates no user pool. */
export interface ExternalIssuerConfig {
  readonly kind: "external";
  readonly issuer: string;
  readonly audience: string | undefined;
  readonly clientIds: string | undefined;
  readonly jwksUrl: string | undefined;
  /**
   * `-c jwks=<file>`: the key set to deliver, checked and made compact at synth; `undefined` reads it from
   * the issuer at deploy time instead (infra/delivered-key-set.ts).
   */
  readonly keySetFile: { readonly path: string; readonly keySetJson: string } | undefined;
  readonly requiredScope: string;
}

/** A custom domain mapped to the API; without `hostedZoneId` the DNS record is yours to create. */
export interface CustomDomainConfig {
  readonly domainName: string;
  /** An ACM certificate for `domainName`, in the stack's region (API Gateway regional endpoint). */
  readonly certificateArn: string;
  /** The Route 53 public hosted zone that holds `domainName`; the stack then creates its alias record. */
  readonly hostedZoneId: string | undefined;
}

/**
 * The Regions that may hold the replicas (and the witness) of one DynamoDB table with multi-Region strong
 * consistency: DynamoDB accepts such a table only within one of these sets.
 */
export const MRSC_REGION_SETS: readonly (readonly string[])[] = [
  ["us-east-1", "us-east-2", "us-west-2"],
  ["eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"],
  ["ap-northeast-1", "ap-northeast-2", "ap-northeast-3"],
];

/**
 * `-c regions=…`: a stack per Region, each serving from its own replica of one strongly consistent table
 * (docs/DEPLOY.md, "Multi-Region"). The first Region also holds the table's definition and the user pool.
 */
export interface MultiRegionConfig {
  /** The serving Regions, in the order given: three, or two with a witness. */
  readonly regions: readonly string[];
  /** The Region that holds a copy of the table's change log only, when two Regions serve. */
  readonly witnessRegion: string | undefined;
  /** One name for every Region, with latency routing; `undefined` leaves each Region on its own URL. */
  readonly domain: MultiRegionDomainConfig | undefined;
}

/** One domain name in a Route 53 hosted zone, served by every Region through its own certificate. */
export interface MultiRegionDomainConfig {
  readonly domainName: string;
  readonly hostedZoneId: string;
  /** Each Region's ACM certificate for `domainName`, by Region. */
  readonly certificateArns: Readonly<Record<string, string>>;
}
/** What stands in front of the HTTP API: nothing, or CloudFront with an AWS WAF web ACL (infra/edge-protection.ts). */
export const EDGE_PROTECTIONS = ["none", "waf"] as const;
export type EdgeProtection = (typeof EDGE_PROTECTIONS)[number];

/** How CodeDeploy moves traffic to a new version of the function. */
export const DEPLOYMENT_STYLES = ["canary", "all-at-once"] as const;
export type DeploymentStyle = (typeof DEPLOYMENT_STYLES)[number];

export interface PlantStoreConfig {
  readonly tokenIssuer: CognitoIssuerConfig | ExternalIssuerConfig;
  readonly memorySizeMb: number;
  /** `undefined` (the default) leaves the function on the account's unreserved pool. */
  readonly reservedConcurrency: number | undefined;
  readonly deployment: DeploymentStyle;
  readonly customDomain: CustomDomainConfig | undefined;
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  /** `undefined` turns CORS off: the API is meant for servers, not browsers. */
  readonly corsAllowOrigins: string[] | undefined;
  /** `undefined` creates no SNS topic; the alarms still exist and show in the console. */
  readonly alarmEmail: string | undefined;
  /**
   * An existing table (in the stack's account and region) to serve instead of creating one: the table a
   * destroyed stack retained. `undefined` creates the table.
   */
  readonly existingTableName: string | undefined;
  /** X-Ray active tracing on the function (the default); `-c tracing=false` turns it off. */
  readonly tracing: boolean;
  /** CloudFormation refuses to delete the stack while on (`-c terminationProtection=true`). */
  readonly terminationProtection: boolean;
  /** Tags on the stack and every resource that takes tags: the stack's own, then `-c tags=key=value,…`. */
  readonly tags: Record<string, string>;
  /** `waf`: CloudFront and a WAF web ACL in front, the API's own endpoints closed to anything else. */
  readonly edgeProtection: EdgeProtection;
}

/** Every context option the app reads; any other plain key is refused as a typo (see refuseUnknownContextKeys). */
export const CONTEXT_KEYS = [
  "stackName",
  "issuer",
  "audience",
  "clientIds",
  "jwksUrl",
  "jwks",
  "requiredScope",
  "cognitoDomainPrefix",
  "memorySize",
  "reservedConcurrency",
  "deployment",
  "domainName",
  "certificateArn",
  "hostedZoneId",
  "throttleRateLimit",
  "throttleBurstLimit",
  "corsAllowOrigins",
  "alarmEmail",
  "tableName",
  "tracing",
  "regions",
  "witnessRegion",
  "certificateArns",
  "userPoolId",
  "userPoolClientId",
  "terminationProtection",
  "tags",
  "edgeProtection",
] as const;

export const CONTEXT_DEFAULTS = {
  stackName: DEFAULT_STACK_NAME,
  // Chosen by `npm run bench`, item M: the rule and the table are in docs/DEPLOY.md and docs/PERFORMANCE.md.
  memorySize: 1024,
  deployment: "canary",
  throttleRateLimit: 50,
  throttleBurstLimit: 100,
  edgeProtection: "none",
} as const;

/** A context value or combination the stack refuses; its message names the option and what is wrong. */
export class ContextError extends Error {
  override name = "ContextError";
}

/** Reads one context value; `app.node.tryGetContext` fits. */
export type ContextReader = (key: string) => unknown;

/**
 * Context keys that are not ours: the CLI's own plain keys. CDK's other keys all hold a `:` or start with
 * `@` (feature flags `@aws-cdk/...`, `aws:cdk:...` from the CLI, lookups cached in cdk.context.json).
 */
const CDK_PLAIN_CONTEXT_KEYS = new Set(["acknowledged-issue-numbers"]);

/**
 * Refuses a context key that is neither one of ours nor CDK's: `-c memorysize=512` would otherwise be
 * ignored and synthesize the default. Pass every key the app was given (`app.node.getAllContext()`).
 */
export function refuseUnknownContextKeys(keys: Iterable<string>): void {
  const known: readonly string[] = CONTEXT_KEYS;
  for (const key of keys) {
    if (known.includes(key) || CDK_PLAIN_CONTEXT_KEYS.has(key) || key.includes(":") || key.startsWith("@")) {
      continue;
    }
    const closest = closestKnownKey(key);
    const suggestion = closest === undefined ? "" : `; did you mean '${closest}'?`;
    throw new ContextError(
      `unknown context key '${key}'${suggestion} known: ${[...CONTEXT_KEYS].sort().join(", ")}`,
    );
  }
}

/** The known key a typo most likely meant: the same letters in another case, or at most 2 edits away. */
function closestKnownKey(key: string): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const known of CONTEXT_KEYS) {
    const distance = known.toLowerCase() === key.toLowerCase() ? 0 : editDistance(known, key);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { key: known, distance };
  }
  return best?.key;
}

/** Levenshtein distance, case-insensitive. */
function editDistance(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (left[i - 1] === right[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}

export function readStackName(readContext: ContextReader): string {
  const stackName = optionalString(readContext, "stackName") ?? CONTEXT_DEFAULTS.stackName;
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new ContextError(`Context "stackName" must be a CloudFormation stack name, got "${stackName}"`);
  }
  return stackName;
}

export function readPlantStoreConfig(readContext: ContextReader): PlantStoreConfig {
  const config = readSettings(readContext);
  requireBurstWithinReservation(config);
  return config;
}

/**
 * Each request in flight holds one of the function's executions, so a burst the stage lets through needs
 * that many at once. Beyond a reservation Lambda throttles instead of the stage, and API Gateway answers a
 * throttled invoke with its own 500 (no Retry-After, an operator's alarm) where the stage answers 429.
 */
function requireBurstWithinReservation({ reservedConcurrency, throttleBurstLimit }: PlantStoreConfig): void {
  if (reservedConcurrency === undefined || throttleBurstLimit <= reservedConcurrency) return;
  throw new ContextError(
    `Context "throttleBurstLimit" (${throttleBurstLimit}) is above "reservedConcurrency" (${reservedConcurrency}): ` +
      "a burst the stage lets through would need more executions than the function may have, and Lambda's " +
      `throttle answers 500 where the stage's answers 429; set -c throttleBurstLimit=${reservedConcurrency} ` +
      "or lower (and throttleRateLimit below it), or reserve more",
  );
}

function readSettings(readContext: ContextReader): PlantStoreConfig {
  const corsAllowOrigins = optionalString(readContext, "corsAllowOrigins");
  const alarmEmail = optionalString(readContext, "alarmEmail");
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(alarmEmail)) {
    throw new ContextError(`Context "alarmEmail" must be an email address, got "${alarmEmail}"`);
  }
  return {
    tokenIssuer: readTokenIssuer(readContext),
    memorySizeMb: integerInRange(readContext, "memorySize", CONTEXT_DEFAULTS.memorySize, 128, 10_240),
    reservedConcurrency: readReservedConcurrency(readContext),
    deployment: readDeploymentStyle(readContext),
    customDomain: readCustomDomain(readContext),
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
    corsAllowOrigins: corsAllowOrigins === undefined ? undefined : readOrigins(corsAllowOrigins),
    alarmEmail,
    existingTableName: readExistingTableName(readContext),
    tracing: readBoolean(readContext, "tracing", true),
    terminationProtection: readBoolean(readContext, "terminationProtection", false),
    tags: readTags(readContext),
    edgeProtection: readEdgeProtection(readContext),
  };
}

/** The tag every resource of a stack carries, its value the stack's name. */
export const STACK_TAG = "plant-store:stack";

/** `-c tags=team=plants,cost-center=42`: keys and values as AWS tags allow them, at most 40 pairs. */
function readTags(readContext: ContextReader): Record<string, string> {
  const text = optionalString(readContext, "tags");
  if (text === undefined) return {};
  const tags: Record<string, string> = {};
  for (const pair of commaList(text)) {
    const [key = "", ...rest] = pair.split("=");
    const value = rest.join("=");
    const tagText = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
    if (!/^.{1,128}$/u.test(key) || key.startsWith("aws:") || !tagText.test(key) || rest.length === 0) {
      throw new ContextError(
        `Context "tags" entry "${pair}" must be key=value, the key 1 to 128 letters, digits, spaces or _.:/=+-@ and not starting with aws:`,
      );
    }
    if (value.length < 1 || value.length > 256 || !tagText.test(value)) {
      throw new ContextError(
        `Context "tags" value of "${key}" must be 1 to 256 letters, digits, spaces or _.:/=+-@`,
      );
    }
    // The stack's own tag names it (found by it after a destroy); a key given twice is a typo.
    if (key === STACK_TAG || key in tags) {
      throw new ContextError(
        `Context "tags" key "${key}" is ${key === STACK_TAG ? "the stack's own tag, set to its name" : "given twice"}`,
      );
    }
    tags[key] = value;
  }
  if (Object.keys(tags).length > 40) throw new ContextError('Context "tags" holds more than 40 tags');
  return tags;
}

function readEdgeProtection(readContext: ContextReader): EdgeProtection {
  const value = optionalString(readContext, "edgeProtection") ?? CONTEXT_DEFAULTS.edgeProtection;
  const protection = EDGE_PROTECTIONS.find((known) => known === value);
  if (protection === undefined) {
    throw new ContextError(
      `Context "edgeProtection" must be ${EDGE_PROTECTIONS.join(" or ")}, got "${value}"`,
    );
  }
  if (protection === "waf" && optionalString(readContext, "domainName") === undefined) {
    throw new ContextError(
      'Context "edgeProtection=waf" needs "domainName" and "certificateArn": the API\'s own execute-api ' +
        "endpoint is closed, and CloudFront reaches the API at that custom domain (docs/DEPLOY.md, Edge protection)",
    );
  }
  return protection;
}

/** `-c corsAllowOrigins`: each entry an origin as a browser sends it, or `*` (infra/cors.ts). */
function readOrigins(commaSeparated: string): string[] {
  const origins = commaList(commaSeparated);
  for (const entry of origins) {
    if (isCorsOriginEntry(entry)) continue;
    const meant = likelyOrigin(entry, URL.canParse(entry) ? new URL(entry) : undefined);
    const suggestion = meant === undefined ? "" : `; did you mean "${meant}"?`;
    throw new ContextError(
      `Context "corsAllowOrigins" entry "${entry}" is not an origin: ${CORS_ORIGIN_RULE} ` +
        `(like https://app.example.com)${suggestion}`,
    );
  }
  return origins;
}

/** The origin an entry that is not one most likely meant: its http(s) origin, or https:// before a bare host. */
function likelyOrigin(entry: string, url: URL | undefined): string | undefined {
  if (url !== undefined && (url.protocol === "https:" || url.protocol === "http:")) return url.origin;
  const withScheme = `https://${entry}`;
  return URL.canParse(withScheme) && isHostName(new URL(withScheme).hostname)
    ? new URL(withScheme).origin
    : undefined;
}

function readExistingTableName(readContext: ContextReader): string | undefined {
  const tableName = optionalString(readContext, "tableName");
  if (tableName !== undefined && !isTableName(tableName)) {
    throw new ContextError(`Context "tableName" must be ${TABLE_NAME_RULE}, got "${tableName}"`);
  }
  return tableName;
}

/** The stack's own Cognito issuer, or with `-c issuer=…` the user's, with what each of them needs. */
function readTokenIssuer(readContext: ContextReader): CognitoIssuerConfig | ExternalIssuerConfig {
  const issuer = optionalString(readContext, "issuer");
  const external: ExternalIssuerOptions = {
    audience: optionalString(readContext, "audience"),
    clientIds: optionalString(readContext, "clientIds"),
    jwksUrl: optionalString(readContext, "jwksUrl"),
    jwks: optionalString(readContext, "jwks"),
    requiredScope: optionalString(readContext, "requiredScope"),
  };
  const domainPrefix = optionalString(readContext, "cognitoDomainPrefix");
  if (issuer !== undefined) return readExternalIssuer(issuer, external, domainPrefix);

  const stray = Object.entries(external).find(([, value]) => value !== undefined);
  if (stray) {
    throw new ContextError(`Context "${stray[0]}" only applies with "issuer" (bring your own OIDC issuer)`);
  }
  const prefixProblem = domainPrefix === undefined ? undefined : domainPrefixProblem(domainPrefix);
  if (prefixProblem !== undefined) {
    throw new ContextError(`Context "cognitoDomainPrefix" ${prefixProblem}, got "${domainPrefix}"`);
  }
  return { kind: "cognito", domainPrefix, retained: readRetainedUserPool(readContext, domainPrefix) };
}

/**
 * `-c userPoolId=… -c userPoolClientId=… -c cognitoDomainPrefix=…`: the user pool, its app client and its
 * domain that a destroyed stack retained. All three or none: the handler needs the client id, the token
 * endpoint output the domain's prefix.
 */
function readRetainedUserPool(
  readContext: ContextReader,
  domainPrefix: string | undefined,
): CognitoIssuerConfig["retained"] {
  const userPoolId = optionalString(readContext, "userPoolId");
  const clientId = optionalString(readContext, "userPoolClientId");
  if (userPoolId === undefined) {
    if (clientId !== undefined) {
      throw new ContextError(
        'Context "userPoolClientId" only applies with "userPoolId" (a retained user pool)',
      );
    }
    return undefined;
  }
  if (!/^[a-z]{2}(?:-[a-z]+)+-\d_[0-9A-Za-z]+$/.test(userPoolId)) {
    throw new ContextError(
      `Context "userPoolId" must be a Cognito user pool id like eu-west-1_AbC123dEf, got "${userPoolId}"`,
    );
  }
  if (clientId === undefined || !/^[0-9a-z]{1,128}$/.test(clientId)) {
    throw new ContextError(
      `Context "userPoolId" needs "userPoolClientId": the retained pool's app client id (the ClientId output), got ${JSON.stringify(clientId)}`,
    );
  }
  if (domainPrefix === undefined) {
    throw new ContextError(
      'Context "userPoolId" needs "cognitoDomainPrefix": the prefix of the retained pool\'s domain (the first label of the TokenEndpoint output)',
    );
  }
  return { userPoolId, clientId, domainPrefix };
}

/** The context options that only apply with `issuer`. */
interface ExternalIssuerOptions {
  readonly audience: string | undefined;
  readonly clientIds: string | undefined;
  readonly jwksUrl: string | undefined;
  readonly jwks: string | undefined;
  readonly requiredScope: string | undefined;
}

function readExternalIssuer(
  issuer: string,
  { audience, clientIds, jwksUrl, jwks, requiredScope }: ExternalIssuerOptions,
  domainPrefix: string | undefined,
): ExternalIssuerConfig {
  if (domainPrefix !== undefined) {
    throw new ContextError(
      `Context "cognitoDomainPrefix" does not apply with "issuer": no user pool is created`,
    );
  }
  requireHttpsUrl("issuer", issuer);
  if (jwksUrl !== undefined) requireHttpsUrl("jwksUrl", jwksUrl);
  // Without one of them any token the issuer signs, for any of its clients or APIs, would be accepted; a
  // deployed handler refuses to start without JWT_AUDIENCE or JWT_CLIENT_IDS (lambda/config.ts).
  if (commaList(audience).length === 0 && commaList(clientIds).length === 0) {
    throw new ContextError(
      `Context "issuer" needs "audience" (the accepted aud values) or "clientIds" (the accepted client_id ` +
        `values): without either, tokens the issuer signs for other clients and APIs would be accepted`,
    );
  }
  return {
    kind: "external",
    issuer,
    audience,
    clientIds,
    jwksUrl,
    keySetFile: jwks === undefined ? undefined : readKeySetFile(jwks),
    requiredScope: requiredScope ?? DEFAULT_REQUIRED_SCOPE,
  };
}

/** `-c jwks=<file>`: a key-set document whose keys are all public; whether it fits is checked at synth. */
function readKeySetFile(path: string): { path: string; keySetJson: string } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ContextError(`Context "jwks" must name a readable key-set file, got "${path}" (${reason})`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new ContextError(`Context "jwks": ${path} is not JSON`);
  }
  try {
    return { path, keySetJson: deliverableKeySet(document) };
  } catch (error) {
    if (!(error instanceof KeySetRefusedError)) throw error;
    throw new ContextError(`Context "jwks": the key set in ${path} is refused: ${error.message}`);
  }
}

/**
 * No reservation unless asked: Lambda refuses a reservation that would leave fewer than 100 unreserved
 * executions, which fails the first deploy on accounts whose quota is still the new-account 10.
 */
function readReservedConcurrency(readContext: ContextReader): number | undefined {
  if (readContext("reservedConcurrency") === "none") return undefined;
  return optionalIntegerInRange(readContext, "reservedConcurrency", 1, 10_000);
}

function readDeploymentStyle(readContext: ContextReader): DeploymentStyle {
  const value = optionalString(readContext, "deployment") ?? CONTEXT_DEFAULTS.deployment;
  const style = DEPLOYMENT_STYLES.find((known) => known === value);
  if (style === undefined) {
    throw new ContextError(`Context "deployment" must be ${DEPLOYMENT_STYLES.join(" or ")}, got "${value}"`);
  }
  return style;
}

function readCustomDomain(readContext: ContextReader): CustomDomainConfig | undefined {
  // With several Regions the domain is theirs: readMultiRegionConfig reads it.
  if (optionalString(readContext, "regions") !== undefined) return undefined;
  const domainName = optionalString(readContext, "domainName");
  const certificateArn = optionalString(readContext, "certificateArn");
  const hostedZoneId = optionalString(readContext, "hostedZoneId");
  if (domainName === undefined) {
    const stray = Object.entries({ certificateArn, hostedZoneId }).find(([, value]) => value !== undefined);
    if (stray) {
      throw new ContextError(`Context "${stray[0]}" only applies with "domainName" (a custom domain)`);
    }
    return undefined;
  }
  if (!isHostName(domainName)) {
    throw new ContextError(
      `Context "domainName" must be a fully qualified host name like api.example.com, got "${domainName}"`,
    );
  }
  if (certificateArn === undefined) {
    throw new ContextError(
      `Context "domainName" needs "certificateArn": an ACM certificate for ${domainName} in the stack's region`,
    );
  }
  requireCertificateArn("certificateArn", certificateArn);
  if (hostedZoneId !== undefined) requireHostedZoneId(hostedZoneId);
  return { domainName, certificateArn, hostedZoneId };
}

function requireCertificateArn(key: string, certificateArn: string): void {
  const region = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/.exec(
    certificateArn,
  )?.[1];
  if (region === undefined || !RegionInfo.regions.some((known) => known.name === region)) {
    throw new ContextError(
      `Context "${key}" must be an ACM certificate ARN in an AWS Region ` +
        `(arn:aws:acm:<region>:<account>:certificate/<id>), got "${certificateArn}"`,
    );
  }
}

function requireHostedZoneId(hostedZoneId: string): void {
  if (!/^Z[A-Z0-9]{1,31}$/.test(hostedZoneId)) {
    throw new ContextError(
      `Context "hostedZoneId" must be a Route 53 hosted zone id like Z0123456789ABC, got "${hostedZoneId}"`,
    );
  }
}

const MRSC_SETS_TEXT = MRSC_REGION_SETS.map((set) => set.join(", ")).join("; ");

/**
 * `-c regions=r1,r2,r3`, or two Regions and `-c witnessRegion=`, all of one MRSC Region set; `undefined`
 * without `regions` (the single-Region stack). With `-c domainName=` it needs `hostedZoneId` (the latency
 * records) and `certificateArns`, one certificate per Region, each matched to its Region by its ARN.
 */
export function readMultiRegionConfig(readContext: ContextReader): MultiRegionConfig | undefined {
  const regionsText = optionalString(readContext, "regions");
  const witnessRegion = optionalString(readContext, "witnessRegion");
  const certificateArnsText = optionalString(readContext, "certificateArns");
  if (regionsText === undefined) {
    const stray = Object.entries({ witnessRegion, certificateArns: certificateArnsText }).find(
      ([, value]) => value !== undefined,
    );
    if (stray) throw new ContextError(`Context "${stray[0]}" only applies with "regions" (multi-Region)`);
    return undefined;
  }
  const regions = commaList(regionsText);
  const replicaCount = witnessRegion === undefined ? 3 : 2;
  const all = witnessRegion === undefined ? regions : [...regions, witnessRegion];
  const set = MRSC_REGION_SETS.find((candidate) => all.every((region) => candidate.includes(region)));
  if (regions.length !== replicaCount || new Set(all).size !== all.length || set === undefined) {
    const given = `got regions "${regions.join(",")}"${witnessRegion === undefined ? "" : ` and witnessRegion "${witnessRegion}"`}`;
    throw new ContextError(
      `Context "regions" must be three different Regions of one multi-Region strong consistency set, or two ` +
        `and a "witnessRegion" of the same set (DynamoDB accepts no other): ${MRSC_SETS_TEXT}; ${given}`,
    );
  }
  if (optionalString(readContext, "certificateArn") !== undefined) {
    throw new ContextError(
      `Context "certificateArn" does not apply with "regions": give each Region its certificate in "certificateArns"`,
    );
  }
  return { regions, witnessRegion, domain: readMultiRegionDomain(readContext, regions, certificateArnsText) };
}

function readMultiRegionDomain(
  readContext: ContextReader,
  regions: readonly string[],
  certificateArnsText: string | undefined,
): MultiRegionDomainConfig | undefined {
  const domainName = optionalString(readContext, "domainName");
  const hostedZoneId = optionalString(readContext, "hostedZoneId");
  if (domainName === undefined) {
    const stray = Object.entries({ certificateArns: certificateArnsText, hostedZoneId }).find(
      ([, value]) => value !== undefined,
    );
    if (stray)
      throw new ContextError(`Context "${stray[0]}" only applies with "domainName" (a custom domain)`);
    return undefined;
  }
  if (!isHostName(domainName)) {
    throw new ContextError(
      `Context "domainName" must be a fully qualified host name like api.example.com, got "${domainName}"`,
    );
  }
  if (hostedZoneId === undefined) {
    throw new ContextError(
      `Context "domainName" with "regions" needs "hostedZoneId": the stacks route ${domainName} to the ` +
        "nearest healthy Region with Route 53 latency records in that hosted zone",
    );
  }
  requireHostedZoneId(hostedZoneId);
  const certificateArns = readCertificateArns(certificateArnsText, regions, domainName);
  return { domainName, hostedZoneId, certificateArns };
}

/** `-c certificateArns=arn1,arn2,…`: exactly one ACM certificate in each Region, known by its ARN's Region. */
function readCertificateArns(
  text: string | undefined,
  regions: readonly string[],
  domainName: string,
): Record<string, string> {
  const need = `one ACM certificate for ${domainName} in each of ${regions.join(", ")} (API Gateway takes a regional domain's certificate from its own Region)`;
  if (text === undefined) {
    throw new ContextError(`Context "domainName" with "regions" needs "certificateArns": ${need}`);
  }
  const byRegion: Record<string, string> = {};
  for (const arn of commaList(text)) {
    requireCertificateArn("certificateArns", arn);
    const region = arn.split(":")[3] ?? "";
    if (!regions.includes(region) || byRegion[region] !== undefined) {
      throw new ContextError(
        `Context "certificateArns" must hold ${need}; "${arn}" is ${byRegion[region] === undefined ? "in no serving Region" : `a second certificate in ${region}`}`,
      );
    }
    byRegion[region] = arn;
  }
  const missing = regions.filter((region) => byRegion[region] === undefined);
  if (missing.length > 0) {
    throw new ContextError(`Context "certificateArns" must hold ${need}; none is in ${missing.join(", ")}`);
  }
  return byRegion;
}

/** Lowercase labels of letters, digits and inner hyphens, at least two of them; no trailing dot. */
function isHostName(value: string): boolean {
  const labels = value.split(".");
  return (
    value.length <= 253 &&
    labels.length >= 2 &&
    labels.every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))
  );
}

/** A context value; `null` (cdk.json's way to write a key without a value) is unset, as a key left out. */
function contextValue(readContext: ContextReader, key: string): unknown {
  const value = readContext(key);
  return value === null ? undefined : value;
}

/** `true` or `false`: a string from `-c key=value`, possibly a boolean from cdk.json. */
function readBoolean(readContext: ContextReader, key: string, defaultValue: boolean): boolean {
  const value = contextValue(readContext, key);
  if (value === undefined) return defaultValue;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  throw new ContextError(`Context "${key}" must be true or false, got ${JSON.stringify(value)}`);
}

function optionalString(readContext: ContextReader, key: string): string | undefined {
  const value = contextValue(readContext, key);
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new ContextError(`Context "${key}" must be a string`);
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function integerInRange(
  readContext: ContextReader,
  key: string,
  defaultValue: number,
  min: number,
  max: number,
): number {
  return optionalIntegerInRange(readContext, key, min, max) ?? defaultValue;
}

/** Context from `-c key=value` arrives as a string, from cdk.json possibly as a number. */
function optionalIntegerInRange(
  readContext: ContextReader,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const value = contextValue(readContext, key);
  if (value === undefined) return undefined;
  const parsed = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof parsed !== "number" || !Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new ContextError(
      `Context "${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

function requireHttpsUrl(key: string, value: string): void {
  if (!URL.canParse(value) || new URL(value).protocol !== "https:") {
    throw new ContextError(`Context "${key}" must be an https URL, got "${value}"`);
  }
}
