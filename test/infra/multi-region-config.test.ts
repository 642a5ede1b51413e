/**
 * `-c regions=…` as the app reads it: only Regions DynamoDB accepts for one strongly consistent table,
 * and a domain only with what every Region needs for it. Each refusal names what to give instead.
 */
import { describe, expect, it } from "vitest";
import { ContextError, readMultiRegionConfig, readPlantStoreConfig } from "../../infra/config.ts";
import { synthesisError } from "../support/synthesize.ts";

const contextOf =
  (values: Record<string, unknown>) =>
  (key: string): unknown =>
    values[key];

const certificate = (region: string, id = "0a1b2c3d-4e5f-6789-abcd-ef0123456789") =>
  `arn:aws:acm:${region}:123456789012:certificate/${id}`;

const SETS_NAMED =
  "us-east-1, us-east-2, us-west-2; eu-west-1, eu-west-2, eu-west-3, eu-central-1; " +
  "ap-northeast-1, ap-northeast-2, ap-northeast-3";

describe("-c regions", () => {
  it("is absent by default: the single-Region stack", () => {
    expect(readMultiRegionConfig(contextOf({}))).toBeUndefined();
  });

  it.each([
    [{ regions: "us-east-1,us-east-2,us-west-2" }, ["us-east-1", "us-east-2", "us-west-2"], undefined],
    [
      { regions: "eu-central-1, eu-west-3 ,eu-west-1" },
      ["eu-central-1", "eu-west-3", "eu-west-1"],
      undefined,
    ],
    [
      { regions: "ap-northeast-2,ap-northeast-1", witnessRegion: "ap-northeast-3" },
      ["ap-northeast-2", "ap-northeast-1"],
      "ap-northeast-3",
    ],
    [
      { regions: "eu-west-2,eu-west-1", witnessRegion: "eu-central-1" },
      ["eu-west-2", "eu-west-1"],
      "eu-central-1",
    ],
  ])(
    "takes %j: the Regions in the order given, the first holding the table and the pool",
    (context, regions, witnessRegion) => {
      expect(readMultiRegionConfig(contextOf(context))).toEqual({
        regions,
        witnessRegion,
        domain: undefined,
      });
    },
  );

  it.each([
    ["Regions of two sets", { regions: "us-east-1,us-east-2,eu-west-1" }],
    ["four Regions of one set", { regions: "eu-west-1,eu-west-2,eu-west-3,eu-central-1" }],
    ["two sets, with a witness", { regions: "us-east-1,us-east-2", witnessRegion: "eu-west-1" }],
    ["two Regions without a witness", { regions: "us-east-1,us-east-2" }],
    [
      "three Regions and a witness",
      { regions: "eu-west-1,eu-west-2,eu-west-3", witnessRegion: "eu-central-1" },
    ],
    ["a witness that also serves", { regions: "us-east-1,us-east-2", witnessRegion: "us-east-2" }],
    ["a Region twice", { regions: "us-east-1,us-east-1,us-east-2" }],
    ["a Region of no set", { regions: "us-east-1,us-east-2,us-west-1" }],
    ["one Region", { regions: "us-east-1" }],
  ])("refuses %s, naming the sets DynamoDB accepts", (_case, context) => {
    const read = () => readMultiRegionConfig(contextOf(context));
    expect(read).toThrow(ContextError);
    expect(read).toThrow(`Context "regions" must be three different Regions of one multi-Region strong`);
    expect(read).toThrow(SETS_NAMED);
    expect(read).toThrow(`got regions "${context.regions.replace(/\s/g, "")}"`);
  });

  it("is refused the same way by the app, before anything is built", () => {
    const error = synthesisError({ regions: "us-east-1,us-east-2,us-west-2,eu-west-1" });
    expect(error).toBeInstanceOf(ContextError);
    expect(error.message).toContain(SETS_NAMED);
  });

  it("takes witnessRegion and certificateArns only with regions", () => {
    expect(() => readMultiRegionConfig(contextOf({ witnessRegion: "us-west-2" }))).toThrow(
      'Context "witnessRegion" only applies with "regions" (multi-Region)',
    );
    expect(() => readMultiRegionConfig(contextOf({ certificateArns: certificate("us-east-1") }))).toThrow(
      'Context "certificateArns" only applies with "regions" (multi-Region)',
    );
  });
});

describe("-c regions with a domain", () => {
  const regions = "us-east-1,us-east-2,us-west-2";
  const domain = { regions, domainName: "plants.example.com", hostedZoneId: "Z0123456789ABCDEFGHIJ" };
  const allCertificates = ["us-west-2", "us-east-1", "us-east-2"]
    .map((region) => certificate(region))
    .join(",");

  it("matches each certificate to its Region by its ARN, in any order", () => {
    expect(readMultiRegionConfig(contextOf({ ...domain, certificateArns: allCertificates }))?.domain).toEqual(
      {
        domainName: "plants.example.com",
        hostedZoneId: "Z0123456789ABCDEFGHIJ",
        certificateArns: {
          "us-east-1": certificate("us-east-1"),
          "us-east-2": certificate("us-east-2"),
          "us-west-2": certificate("us-west-2"),
        },
      },
    );
  });

  it("leaves the single-Region domain options to the Regions: no single certificate, no single record", () => {
    const config = readPlantStoreConfig(contextOf({ ...domain, certificateArns: allCertificates }));
    expect(config.customDomain).toBeUndefined();
    expect(() =>
      readMultiRegionConfig(
        contextOf({ ...domain, certificateArns: allCertificates, certificateArn: certificate("us-east-1") }),
      ),
    ).toThrow('give each Region its certificate in "certificateArns"');
  });

  it.each([
    [
      "no certificates",
      {},
      'needs "certificateArns": one ACM certificate for plants.example.com in each of us-east-1, us-east-2, us-west-2',
    ],
    [
      "a Region without one",
      { certificateArns: [certificate("us-east-1"), certificate("us-east-2")].join(",") },
      "none is in us-west-2",
    ],
    [
      "one of a Region that does not serve",
      { certificateArns: `${allCertificates},${certificate("eu-west-1")}` },
      `"${certificate("eu-west-1")}" is in no serving Region`,
    ],
    [
      "two in one Region",
      {
        certificateArns: `${allCertificates},${certificate("us-east-1", "1a1b2c3d-4e5f-6789-abcd-ef0123456789")}`,
      },
      "a second certificate in us-east-1",
    ],
    [
      "what is not an ARN",
      { certificateArns: "us-east-1=abc" },
      'Context "certificateArns" must be an ACM certificate ARN',
    ],
    [
      "no hosted zone",
      { certificateArns: allCertificates, hostedZoneId: undefined },
      'needs "hostedZoneId": the stacks route plants.example.com to the nearest healthy Region',
    ],
  ])("refuses %s", (_case, change, message) => {
    expect(() => readMultiRegionConfig(contextOf({ ...domain, ...change }))).toThrow(message);
  });

  it("refuses certificates or a hosted zone without a domain name", () => {
    expect(() => readMultiRegionConfig(contextOf({ regions, certificateArns: allCertificates }))).toThrow(
      'Context "certificateArns" only applies with "domainName"',
    );
  });
});
