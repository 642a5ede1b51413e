/**
 * The stack's options, read from CDK context (`-c key=value`, or cdk.json) and checked at synth: every
 * refusal is a ContextError whose message names the option and what is wrong (docs/DEPLOY.md lists them).
 */
import { readFileSync } from "node:fs";
import { RegionInfo } from "aws-cdk-lib/region-info";
import { commaList } from "../lambda/comma-list.ts";
import { isTableName, TABLE_NAME_RULE } from "../lambda/config.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import { CORS_ORIGIN_RULE, isCorsOriginEntry } from "./cors.ts";
import { deliverableKeySet, KeySetRefusedError } from "./key-set-delivery/public-key-set.ts";
import { domainPrefixProblem } from "./rules/cognito-domain-prefix.ts";
import { DEFAULT_STACK_NAME } from "./stack-outputs.ts";

/** Tokens come from the Cognito user pool the stack creates (or, with `userPoolId`, one a destroyed stack retained). */
export interface CognitoIssuerConfig {
  readonly kind: "cognito";
  /** By default derived from the stack name and the stack's unique id. */
  readonly domainPrefix: string | undefined;
  readonly retained: { userPoolId: string; clientId: string; domainPrefix: string } | undefined;
}

/** Tokens come from an OIDC issuer the user brings; the stack creates no user pool. */
export interface ExternalIssuerConfig {
  readonly kind: "external";
  readonly issuer: string;
  readonly audience: string | undefined;
  readonly clientIds: string | undefined;
  readonly jwksUrl: string | undefined;
  /** `-c jwks=<file>`, checked and made compact at synth; `undefined` reads the issuer's at deploy time. */
  readonly keySetFile: { readonly path: string; readonly keySetJson: string } | undefined;
  readonly requiredScope: string;
}

/** A custom domain mapped to the API; without `hostedZoneId` the DNS record is yours to create. */
export interface CustomDomainConfig {
  readonly domainName: string;
  /** An ACM certificate for `domainName`, in the stack's region (API Gateway regional endpoint). */
  readonly certificateArn: string;
  readonly hostedZoneId: string | undefined;
}

/** The Region sets DynamoDB accepts one table with multi-Region strong consistency within. */
export const MRSC_REGION_SETS: readonly (readonly string[])[] = [
  ["us-east-1", "us-east-2", "us-west-2"],
  ["eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"],
  ["ap-northeast-1", "ap-northeast-2", "ap-northeast-3"],
];

/** `-c regions=…`: a stack per Region, each on its own replica of one table (docs/DEPLOY.md, "Multi-Region"). */
export interface MultiRegionConfig {
  /** Three, or two with a witness; the first also holds the table's definition and the user pool. */
  readonly regions: readonly string[];
  readonly witnessRegion: string | undefined;
  /** One name for every Region, with latency routing; `undefined` leaves each Region on its own URL. */
  readonly domain: MultiRegionDomainConfig | undefined;
}

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
  /** A table a destroyed stack retained, served instead of creating one. */
  readonly existingTableName: string | undefined;
  /** X-Ray active tracing on the function (the default); `-c tracing=false` turns it off. */
  readonly tracing: boolean;
  readonly terminationProtection: boolean;
  /** Tags on the stack and every resource that takes tags: the stack's own, then `-c tags=key=value,…`. */
  readonly tags: Record<string, string>;
  readonly edgeProtection: EdgeProtection;
}

/** Every context option the app reads; any other plain key is refused as a typo (see refuseUnknownContextKeys). */
export const CONTEXT_KEYS = [
  ...["stackName", "issuer", "audience", "clientIds", "jwksUrl", "jwks", "requiredScope"],
  ...["cognitoDomainPrefix", "memorySize", "reservedConcurrency", "deployment", "domainName"],
  ...["certificateArn", "hostedZoneId", "throttleRateLimit", "throttleBurstLimit", "corsAllowOrigins"],
  ...["alarmEmail", "tableName", "tracing", "regions", "witnessRegion", "certificateArns", "userPoolId"],
  ...["userPoolClientId", "terminationProtection", "tags", "edgeProtection"],
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

/** The tag every resource of a stack carries, its value the stack's name. */
export const STACK_TAG = "plant-store:stack";

/** A context value or combination the stack refuses; its message names the option and what is wrong. */
export class ContextError extends Error {
  override name = "ContextError";
}

/** Reads one context value; `app.node.tryGetContext` fits. */
export type ContextReader = (key: string) => unknown;

/**
 * Refuses a context key that is neither one of ours nor CDK's (whose keys hold a `:`, start with `@`, or
 * are the CLI's `acknowledged-issue-numbers`): `-c memorysize=512` would otherwise synthesize the default.
 */
export function refuseUnknownContextKeys(keys: Iterable<string>): void {
  const known: readonly string[] = CONTEXT_KEYS;
  for (const key of keys) {
    if (
      known.includes(key) ||
      key === "acknowledged-issue-numbers" ||
      key.includes(":") ||
      key.startsWith("@")
    ) {
      continue;
    }
    // The known key a typo most likely meant: the same letters in another case, or at most 2 edits away.
    const distances = known.map(
      (name) => [name, editDistance(name.toLowerCase(), key.toLowerCase())] as const,
    );
    const [closest] = distances.filter(([, distance]) => distance <= 2).sort((a, b) => a[1] - b[1]);
    const suggestion = closest ? `; did you mean '${closest[0]}'?` : "";
    throw new ContextError(
      `unknown context key '${key}'${suggestion} known: ${[...known].sort().join(", ")}`,
    );
  }
}

/** Levenshtein distance. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

export function readStackName(read: ContextReader): string {
  const stackName = text(read, "stackName") ?? CONTEXT_DEFAULTS.stackName;
  check(
    /^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName),
    "stackName",
    "a CloudFormation stack name",
    stackName,
  );
  return stackName;
}

export function readPlantStoreConfig(read: ContextReader): PlantStoreConfig {
  const alarmEmail = text(read, "alarmEmail");
  if (alarmEmail !== undefined)
    check(/^[^@\s]+@[^@\s]+$/.test(alarmEmail), "alarmEmail", "an email address", alarmEmail);
  const tableName = text(read, "tableName");
  if (tableName !== undefined) check(isTableName(tableName), "tableName", TABLE_NAME_RULE, tableName);
  const corsAllowOrigins = text(read, "corsAllowOrigins");
  const config: PlantStoreConfig = {
    tokenIssuer: readTokenIssuer(read),
    memorySizeMb: integer(read, "memorySize", 128, 10_240) ?? CONTEXT_DEFAULTS.memorySize,
    // None unless asked: Lambda refuses a reservation that would leave fewer than 100 unreserved
    // executions, which fails the first deploy on accounts whose quota is still the new-account 10.
    reservedConcurrency:
      read("reservedConcurrency") === "none" ? undefined : integer(read, "reservedConcurrency", 1, 10_000),
    deployment: oneOf(read, "deployment", DEPLOYMENT_STYLES, CONTEXT_DEFAULTS.deployment),
    customDomain: readCustomDomain(read),
    throttleRateLimit: integer(read, "throttleRateLimit", 1, 10_000) ?? CONTEXT_DEFAULTS.throttleRateLimit,
    throttleBurstLimit: integer(read, "throttleBurstLimit", 1, 5_000) ?? CONTEXT_DEFAULTS.throttleBurstLimit,
    corsAllowOrigins:
      corsAllowOrigins === undefined ? undefined : commaList(corsAllowOrigins).map(corsOrigin),
    alarmEmail,
    existingTableName: tableName,
    tracing: boolean(read, "tracing", true),
    terminationProtection: boolean(read, "terminationProtection", false),
    tags: readTags(text(read, "tags")),
    edgeProtection: oneOf(read, "edgeProtection", EDGE_PROTECTIONS, CONTEXT_DEFAULTS.edgeProtection),
  };
  if (config.edgeProtection === "waf" && text(read, "domainName") === undefined) {
    throw new ContextError(
      'Context "edgeProtection=waf" needs "domainName" and "certificateArn": the API\'s own execute-api ' +
        "endpoint is closed, and CloudFront reaches the API at that custom domain (docs/DEPLOY.md, Edge protection)",
    );
  }
  // Each request in flight holds one execution: beyond a reservation Lambda throttles instead of the
  // stage, and API Gateway answers a throttled invoke with its own 500 where the stage answers 429.
  const { reservedConcurrency: reserved, throttleBurstLimit: burst } = config;
  if (reserved !== undefined && burst > reserved) {
    throw new ContextError(
      `Context "throttleBurstLimit" (${burst}) is above "reservedConcurrency" (${reserved}): ` +
        "a burst the stage lets through would need more executions than the function may have, and Lambda's " +
        `throttle answers 500 where the stage's answers 429; set -c throttleBurstLimit=${reserved} ` +
        "or lower (and throttleRateLimit below it), or reserve more",
    );
  }
  return config;
}

/** `-c tags=team=plants,cost-center=42`: keys and values as AWS tags allow them, at most 40 pairs. */
function readTags(value: string | undefined): Record<string, string> {
  const tags: Record<string, string> = {};
  const tagText = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
  for (const pair of commaList(value)) {
    const [key = "", ...rest] = pair.split("=");
    const tagValue = rest.join("=");
    if (!/^.{1,128}$/u.test(key) || key.startsWith("aws:") || !tagText.test(key) || rest.length === 0) {
      throw new ContextError(
        `Context "tags" entry "${pair}" must be key=value, the key 1 to 128 letters, digits, spaces or _.:/=+-@ and not starting with aws:`,
      );
    }
    if (tagValue.length < 1 || tagValue.length > 256 || !tagText.test(tagValue)) {
      throw new ContextError(
        `Context "tags" value of "${key}" must be 1 to 256 letters, digits, spaces or _.:/=+-@`,
      );
    }
    // The stack's own tag names it (found by it after a destroy); a key given twice is a typo.
    if (key === STACK_TAG || key in tags) {
      const why = key === STACK_TAG ? "the stack's own tag, set to its name" : "given twice";
      throw new ContextError(`Context "tags" key "${key}" is ${why}`);
    }
    tags[key] = tagValue;
  }
  if (Object.keys(tags).length > 40) throw new ContextError('Context "tags" holds more than 40 tags');
  return tags;
}

/** One `-c corsAllowOrigins` entry: an origin as a browser sends it, or `*` (infra/cors.ts). */
function corsOrigin(entry: string): string {
  if (isCorsOriginEntry(entry)) return entry;
  // What it most likely meant: its http(s) origin, or https:// before a bare host.
  const url = parseUrl(entry);
  const bare = parseUrl(`https://${entry}`);
  const meant =
    url && /^https?:$/.test(url.protocol)
      ? url.origin
      : bare && isHostName(bare.hostname)
        ? bare.origin
        : undefined;
  throw new ContextError(
    `Context "corsAllowOrigins" entry "${entry}" is not an origin: ${CORS_ORIGIN_RULE} ` +
      `(like https://app.example.com)${meant === undefined ? "" : `; did you mean "${meant}"?`}`,
  );
}

/** The stack's own Cognito issuer, or with `-c issuer=…` the user's, with what each of them needs. */
function readTokenIssuer(read: ContextReader): CognitoIssuerConfig | ExternalIssuerConfig {
  const issuer = text(read, "issuer");
  const [audience, clientIds, jwksUrl, jwks, requiredScope] = (
    ["audience", "clientIds", "jwksUrl", "jwks", "requiredScope"] as const
  ).map((key) => text(read, key));
  const domainPrefix = text(read, "cognitoDomainPrefix");
  if (issuer !== undefined) {
    if (domainPrefix !== undefined) {
      throw new ContextError(
        `Context "cognitoDomainPrefix" does not apply with "issuer": no user pool is created`,
      );
    }
    httpsUrl("issuer", issuer);
    if (jwksUrl !== undefined) httpsUrl("jwksUrl", jwksUrl);
    // Without one of them any token the issuer signs, for any of its clients or APIs, would be accepted; a
    // deployed handler refuses to start without JWT_AUDIENCE or JWT_CLIENT_IDS (lambda/config.ts).
    if (commaList(audience).length === 0 && commaList(clientIds).length === 0) {
      throw new ContextError(
        `Context "issuer" needs "audience" (the accepted aud values) or "clientIds" (the accepted client_id ` +
          `values): without either, tokens the issuer signs for other clients and APIs would be accepted`,
      );
    }
    const keySetFile = jwks === undefined ? undefined : readKeySetFile(jwks);
    const scope = requiredScope ?? DEFAULT_REQUIRED_SCOPE;
    return { kind: "external", issuer, audience, clientIds, jwksUrl, keySetFile, requiredScope: scope };
  }
  onlyWith("issuer", "bring your own OIDC issuer", { audience, clientIds, jwksUrl, jwks, requiredScope });
  const prefixProblem = domainPrefix === undefined ? undefined : domainPrefixProblem(domainPrefix);
  if (prefixProblem !== undefined) {
    throw new ContextError(`Context "cognitoDomainPrefix" ${prefixProblem}, got "${domainPrefix}"`);
  }
  // The pool, app client and domain a destroyed stack retained: all three or none, since the handler
  // needs the client id and the token endpoint output the domain's prefix.
  const userPoolId = text(read, "userPoolId");
  const clientId = text(read, "userPoolClientId");
  if (userPoolId === undefined) {
    onlyWith("userPoolId", "a retained user pool", { userPoolClientId: clientId });
    return { kind: "cognito", domainPrefix, retained: undefined };
  }
  const poolIdShape = /^[a-z]{2}(?:-[a-z]+)+-\d_[0-9A-Za-z]+$/.test(userPoolId);
  check(poolIdShape, "userPoolId", "a Cognito user pool id like eu-west-1_AbC123dEf", userPoolId);
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
  return { kind: "cognito", domainPrefix, retained: { userPoolId, clientId, domainPrefix } };
}

/** `-c jwks=<file>`: a key-set document whose keys are all public; whether it fits is checked at synth. */
function readKeySetFile(path: string): { path: string; keySetJson: string } {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code;
    if (reason === undefined) throw new ContextError(`Context "jwks": ${path} is not JSON`);
    throw new ContextError(`Context "jwks" must name a readable key-set file, got "${path}" (${reason})`);
  }
  try {
    return { path, keySetJson: deliverableKeySet(document) };
  } catch (error) {
    if (!(error instanceof KeySetRefusedError)) throw error;
    throw new ContextError(`Context "jwks": the key set in ${path} is refused: ${error.message}`);
  }
}

function readCustomDomain(read: ContextReader): CustomDomainConfig | undefined {
  // With several Regions the domain is theirs: readMultiRegionConfig reads it.
  if (text(read, "regions") !== undefined) return undefined;
  const [domainName, certificateArn, hostedZoneId] = domainOptions(read, "certificateArn");
  if (domainName === undefined)
    return onlyWith("domainName", "a custom domain", { certificateArn, hostedZoneId });
  if (certificateArn === undefined) {
    throw new ContextError(
      `Context "domainName" needs "certificateArn": an ACM certificate for ${domainName} in the stack's region`,
    );
  }
  certificateRegion("certificateArn", certificateArn);
  return { domainName, certificateArn, hostedZoneId };
}

/**
 * `-c regions=r1,r2,r3`, or two Regions and `-c witnessRegion=`, all of one MRSC Region set; `undefined`
 * without `regions` (the single-Region stack). With `-c domainName=` it needs `hostedZoneId` (the latency
 * records) and `certificateArns`, one certificate per Region, each matched to its Region by its ARN.
 */
export function readMultiRegionConfig(read: ContextReader): MultiRegionConfig | undefined {
  const regionsText = text(read, "regions");
  const witnessRegion = text(read, "witnessRegion");
  if (regionsText === undefined) {
    return onlyWith("regions", "multi-Region", {
      witnessRegion,
      certificateArns: text(read, "certificateArns"),
    });
  }
  const regions = commaList(regionsText);
  const all = witnessRegion === undefined ? regions : [...regions, witnessRegion];
  const set = MRSC_REGION_SETS.find((candidate) => all.every((region) => candidate.includes(region)));
  if (regions.length !== (witnessRegion === undefined ? 3 : 2) || new Set(all).size !== all.length || !set) {
    const witness = witnessRegion === undefined ? "" : ` and witnessRegion "${witnessRegion}"`;
    throw new ContextError(
      `Context "regions" must be three different Regions of one multi-Region strong consistency set, or two ` +
        `and a "witnessRegion" of the same set (DynamoDB accepts no other): ` +
        `${MRSC_REGION_SETS.map((regionSet) => regionSet.join(", ")).join("; ")}; got regions "${regions.join(",")}"${witness}`,
    );
  }
  if (text(read, "certificateArn") !== undefined) {
    throw new ContextError(
      `Context "certificateArn" does not apply with "regions": give each Region its certificate in "certificateArns"`,
    );
  }
  const [domainName, arnsText, hostedZoneId] = domainOptions(read, "certificateArns");
  if (domainName === undefined) {
    onlyWith("domainName", "a custom domain", { certificateArns: arnsText, hostedZoneId });
    return { regions, witnessRegion, domain: undefined };
  }
  if (hostedZoneId === undefined) {
    throw new ContextError(
      `Context "domainName" with "regions" needs "hostedZoneId": the stacks route ${domainName} to the ` +
        "nearest healthy Region with Route 53 latency records in that hosted zone",
    );
  }
  const need = `one ACM certificate for ${domainName} in each of ${regions.join(", ")} (API Gateway takes a regional domain's certificate from its own Region)`;
  if (arnsText === undefined)
    throw new ContextError(`Context "domainName" with "regions" needs "certificateArns": ${need}`);
  const certificateArns: Record<string, string> = {};
  for (const arn of commaList(arnsText)) {
    const region = certificateRegion("certificateArns", arn);
    if (!regions.includes(region) || certificateArns[region] !== undefined) {
      const why =
        certificateArns[region] === undefined ? "in no serving Region" : `a second certificate in ${region}`;
      throw new ContextError(`Context "certificateArns" must hold ${need}; "${arn}" is ${why}`);
    }
    certificateArns[region] = arn;
  }
  const missing = regions.filter((region) => certificateArns[region] === undefined);
  if (missing.length > 0) {
    throw new ContextError(`Context "certificateArns" must hold ${need}; none is in ${missing.join(", ")}`);
  }
  return { regions, witnessRegion, domain: { domainName, hostedZoneId, certificateArns } };
}

/** `domainName`, the certificate option named, and `hostedZoneId`, the two ids checked for their shape. */
function domainOptions(read: ContextReader, certificateKey: string): (string | undefined)[] {
  const [domainName, certificate, hostedZoneId] = ["domainName", certificateKey, "hostedZoneId"].map((key) =>
    text(read, key),
  );
  if (domainName !== undefined) {
    check(
      isHostName(domainName),
      "domainName",
      "a fully qualified host name like api.example.com",
      domainName,
    );
  }
  if (domainName !== undefined && hostedZoneId !== undefined) {
    const zoneShape = /^Z[A-Z0-9]{1,31}$/.test(hostedZoneId);
    check(zoneShape, "hostedZoneId", "a Route 53 hosted zone id like Z0123456789ABC", hostedZoneId);
  }
  return [domainName, certificate, hostedZoneId];
}

/** The Region of an ACM certificate ARN; refused when it is none, or names no AWS Region. */
function certificateRegion(key: string, arn: string): string {
  const region = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/.exec(arn)?.[1] ?? "";
  const known = RegionInfo.regions.some(({ name }) => name === region);
  check(
    known,
    key,
    "an ACM certificate ARN in an AWS Region (arn:aws:acm:<region>:<account>:certificate/<id>)",
    arn,
  );
  return region;
}

/** Refuses any of `options` that is set, since it only applies with `key`. */
function onlyWith(key: string, feature: string, options: Record<string, string | undefined>): undefined {
  const stray = Object.entries(options).find(([, value]) => value !== undefined);
  if (stray) throw new ContextError(`Context "${stray[0]}" only applies with "${key}" (${feature})`);
  return undefined;
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

function check(ok: boolean, key: string, what: string, value: string): void {
  if (!ok) throw new ContextError(`Context "${key}" must be ${what}, got "${value}"`);
}

/** A context value; `null` (cdk.json's way to write a key without a value) is unset, as a key left out. */
function contextValue(read: ContextReader, key: string): unknown {
  return read(key) ?? undefined;
}

/** A string option, trimmed; empty is unset. */
function text(read: ContextReader, key: string): string | undefined {
  const value = contextValue(read, key);
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new ContextError(`Context "${key}" must be a string`);
  return value.trim() || undefined;
}

function oneOf<T extends string>(read: ContextReader, key: string, values: readonly T[], fallback: T): T {
  const value = text(read, key) ?? fallback;
  const known = values.find((candidate) => candidate === value);
  check(known !== undefined, key, values.join(" or "), value);
  return known ?? fallback;
}

/** `true` or `false`: a string from `-c key=value`, possibly a boolean from cdk.json. */
function boolean(read: ContextReader, key: string, fallback: boolean): boolean {
  const value = contextValue(read, key);
  if (value === undefined) return fallback;
  if (value === true || value === "true" || value === false || value === "false")
    return String(value) === "true";
  throw new ContextError(`Context "${key}" must be true or false, got ${JSON.stringify(value)}`);
}

/** Context from `-c key=value` arrives as a string, from cdk.json possibly as a number. */
function integer(read: ContextReader, key: string, min: number, max: number): number | undefined {
  const value = contextValue(read, key);
  if (value === undefined) return undefined;
  const parsed = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof parsed !== "number" || !Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new ContextError(
      `Context "${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

function httpsUrl(key: string, value: string): void {
  if (parseUrl(value)?.protocol !== "https:") {
    throw new ContextError(`Context "${key}" must be an https URL, got "${value}"`);
  }
}

function parseUrl(value: string): URL | undefined {
  return URL.canParse(value) ? new URL(value) : undefined;
}
