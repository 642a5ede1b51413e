import { commaList } from "../../lambda/comma-list.ts";
import {
  ContextError,
  type ContextReader,
  certificateRegion,
  domainOptions,
  onlyWith,
  text,
} from "../context-values.ts";

/** The Region sets DynamoDB accepts one table with multi-Region strong consistency within. */
export const MRSC_REGION_SETS: readonly (readonly string[])[] = [
  ["us-east-1", "us-east-2", "us-west-2"],
  ["eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"],
  ["ap-northeast-1", "ap-northeast-2", "ap-northeast-3"],
];

/** `-c regions=…`: a stack per Region, each on its own replica of one table (docs/DEPLOY.md, "Multi-Region"). */
export type MultiRegionConfig = NonNullable<ReturnType<typeof readMultiRegionConfig>>;
/** One name for every Region, with latency routing; without it each Region is on its own URL. */
export type MultiRegionDomainConfig = NonNullable<MultiRegionConfig["domain"]>;

/**
 * `-c regions=r1,r2,r3`, or two Regions and `-c witnessRegion=`, all of one MRSC Region set; `undefined`
 * without `regions` (the single-Region stack). The first Region also holds the table's definition and the
 * user pool. With `-c domainName=` it needs `hostedZoneId` (the latency records) and `certificateArns`, one
 * certificate per Region, each matched to its Region by its ARN (`certificateArns`, by Region).
 */
export function readMultiRegionConfig(read: ContextReader) {
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
