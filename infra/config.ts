/**
 * The stack's options, read from CDK context (`-c key=value`, or cdk.json) and checked at synth: every
 * refusal is a ContextError whose message names the option and what is wrong (docs/DEPLOY.md lists them).
 */
import { commaList } from "../lambda/comma-list.ts";
import { isTableName, TABLE_NAME_RULE } from "../lambda/config.ts";
import {
  boolean,
  ContextError,
  type ContextReader,
  certificateRegion,
  check,
  domainOptions,
  integer,
  isHostName,
  oneOf,
  onlyWith,
  parseUrl,
  text,
} from "./context-values.ts";
import { CORS_ORIGIN_RULE, isCorsOriginEntry } from "./cors.ts";
import { readTokenIssuer } from "./issuer-config.ts";
import { DEFAULT_STACK_NAME } from "./stack-outputs.ts";

export { ContextError } from "./context-values.ts";
export type { CognitoIssuerConfig, ExternalIssuerConfig } from "./issuer-config.ts";
export {
  type MultiRegionConfig,
  type MultiRegionDomainConfig,
  readMultiRegionConfig,
} from "./multi-region/multi-region-config.ts";

/**
 * A custom domain mapped to the API, with an ACM certificate in the stack's region (API Gateway regional
 * endpoint); without `hostedZoneId` the DNS record is yours to create.
 */
export type CustomDomainConfig = NonNullable<ReturnType<typeof readCustomDomain>>;

/** What stands in front of the HTTP API: nothing, or CloudFront with an AWS WAF web ACL (infra/edge-protection.ts). */
export const EDGE_PROTECTIONS = ["none", "waf"] as const;
/** How CodeDeploy moves traffic to a new version of the function. */
export const DEPLOYMENT_STYLES = ["canary", "all-at-once"] as const;
export type DeploymentStyle = (typeof DEPLOYMENT_STYLES)[number];

export type PlantStoreConfig = ReturnType<typeof readPlantStoreConfig>;

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
  // Chosen by `npm run bench`'s memory table: the rule and the table are in docs/DEPLOY.md and docs/PERFORMANCE.md.
  memorySize: 1024,
  deployment: "canary",
  throttleRateLimit: 50,
  throttleBurstLimit: 100,
  edgeProtection: "none",
} as const;

/** The tag every resource of a stack carries, its value the stack's name. */
export const STACK_TAG = "plant-store:stack";

/**
 * Refuses a context key that is neither one of ours nor CDK's (whose keys hold a `:`, start with `@`, or
 * are the CLI's `acknowledged-issue-numbers`): `-c memorysize=512` would otherwise synthesize the default.
 */
export function refuseUnknownContextKeys(keys: Iterable<string>): void {
  const known: readonly string[] = CONTEXT_KEYS;
  const cdks = (key: string) =>
    key === "acknowledged-issue-numbers" || key.includes(":") || key.startsWith("@");
  const key = [...keys].find((candidate) => !known.includes(candidate) && !cdks(candidate));
  if (key === undefined) return;
  // The known key a typo most likely meant: the same letters in another case, or at most 2 edits away.
  const distances = known.map((name) => [name, editDistance(name.toLowerCase(), key.toLowerCase())] as const);
  const [closest] = distances.filter(([, distance]) => distance <= 2).sort((a, b) => a[1] - b[1]);
  const suggestion = closest ? `; did you mean '${closest[0]}'?` : "";
  throw new ContextError(`unknown context key '${key}'${suggestion} known: ${[...known].sort().join(", ")}`);
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

export function readPlantStoreConfig(read: ContextReader) {
  const alarmEmail = text(read, "alarmEmail");
  if (alarmEmail !== undefined)
    check(/^[^@\s]+@[^@\s]+$/.test(alarmEmail), "alarmEmail", "an email address", alarmEmail);
  const tableName = text(read, "tableName");
  if (tableName !== undefined) check(isTableName(tableName), "tableName", TABLE_NAME_RULE, tableName);
  const corsAllowOrigins = text(read, "corsAllowOrigins");
  const config = {
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
    // Unset turns CORS off: the API is meant for servers, not browsers.
    corsAllowOrigins:
      corsAllowOrigins === undefined ? undefined : commaList(corsAllowOrigins).map(corsOrigin),
    // Unset creates no SNS topic; the alarms still exist and show in the console.
    alarmEmail,
    // A table a destroyed stack retained, served instead of creating one.
    existingTableName: tableName,
    tracing: boolean(read, "tracing", true),
    terminationProtection: boolean(read, "terminationProtection", false),
    // Tags on the stack and every resource that takes tags: the stack's own, then `-c tags=key=value,…`.
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

function readCustomDomain(read: ContextReader) {
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
