import { describe, expect, it } from "vitest";
import { readConfig } from "../../lambda/config.ts";

const minimal = {
  TABLE_NAME: "plants",
  AWS_REGION: "eu-west-1",
  AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
  AWS_SECRET_ACCESS_KEY: "secret",
  JWT_ISSUER: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/",
};

describe("readConfig", () => {
  it("derives the defaults a deployed function needs", () => {
    expect(readConfig(minimal)).toEqual({
      tableName: "plants",
      region: "eu-west-1",
      dynamoDbEndpoint: "https://dynamodb.eu-west-1.amazonaws.com",
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: undefined },
      issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/",
      jwksUrl: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/.well-known/jwks.json",
      audiences: [],
      clientIds: [],
      requiredScope: "plants/write",
      storeDeadlineMs: 3000,
      storeAttemptTimeoutMs: 1000,
      storeMaxAttempts: 3,
      functionName: "local",
      functionVersion: "$LATEST",
    });
  });

  it("honours the standard endpoint variable, the session token and the lists", () => {
    const config = readConfig({
      ...minimal,
      AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:8000/",
      AWS_SESSION_TOKEN: "session",
      JWT_AUDIENCE: "api://plants, other",
      JWT_CLIENT_IDS: "client-a,client-b",
      JWKS_URL: "https://keys.example/jwks.json",
      STORE_DEADLINE_MS: "500",
      STORE_MAX_ATTEMPTS: "5",
    });
    expect(config.storeMaxAttempts).toBe(5);
    expect(config.dynamoDbEndpoint).toBe("http://127.0.0.1:8000");
    expect(config.credentials.sessionToken).toBe("session");
    expect(config.audiences).toEqual(["api://plants", "other"]);
    expect(config.clientIds).toEqual(["client-a", "client-b"]);
    expect(config.jwksUrl).toBe("https://keys.example/jwks.json");
    expect(config.storeAttemptTimeoutMs).toBe(500);
  });

  it.each(["TABLE_NAME", "JWT_ISSUER", "AWS_REGION", "AWS_SECRET_ACCESS_KEY"])(
    "fails fast without %s",
    (name) => {
      expect(() => readConfig({ ...minimal, [name]: undefined })).toThrow(
        `environment variable ${name} must be set`,
      );
    },
  );

  it("fails fast on a TABLE_NAME DynamoDB would refuse, as the stack and the local run do", () => {
    expect(() => readConfig({ ...minimal, TABLE_NAME: "pl" })).toThrow(
      "environment variable TABLE_NAME must be a DynamoDB table name (3 to 255 letters, digits, _ - .), got 'pl'",
    );
    expect(() => readConfig({ ...minimal, TABLE_NAME: "plants table" })).toThrow("TABLE_NAME");
    expect(readConfig({ ...minimal, TABLE_NAME: "PlantStore-PlantsTable1A2B.v2_x" }).tableName).toBe(
      "PlantStore-PlantsTable1A2B.v2_x",
    );
  });

  it("refuses to run deployed without a client id or an audience to check", () => {
    const deployed = { ...minimal, AWS_LAMBDA_FUNCTION_NAME: "PlantStore-Handler" };
    expect(() => readConfig(deployed)).toThrow(
      "environment variable JWT_CLIENT_IDS or JWT_AUDIENCE must be set in a deployed function",
    );
    expect(readConfig({ ...deployed, JWT_CLIENT_IDS: "client-a" }).functionName).toBe("PlantStore-Handler");
    expect(
      readConfig({ ...deployed, JWT_CLIENT_IDS: "client-a", AWS_LAMBDA_FUNCTION_VERSION: "7" })
        .functionVersion,
    ).toBe("7");
    expect(readConfig({ ...deployed, JWT_AUDIENCE: "api://plants" }).audiences).toEqual(["api://plants"]);
  });

  it("fails fast on a malformed number", () => {
    expect(() => readConfig({ ...minimal, STORE_DEADLINE_MS: "soon" })).toThrow(
      "environment variable STORE_DEADLINE_MS must be a positive integer, got 'soon'",
    );
    expect(() => readConfig({ ...minimal, STORE_MAX_ATTEMPTS: "0" })).toThrow(
      "environment variable STORE_MAX_ATTEMPTS must be a positive integer, got '0'",
    );
  });

  it.each([
    ["AWS_ENDPOINT_URL_DYNAMODB", "notaurl"],
    ["AWS_ENDPOINT_URL_DYNAMODB", "ftp://dynamodb.example"],
    ["AWS_ENDPOINT_URL_DYNAMODB", "http://"],
    ["AWS_ENDPOINT_URL", "localhost:8000"],
    ["JWKS_URL", "/keys"],
    ["JWKS_URL", "keys.json"],
  ])("names the variable whose URL is malformed: %s=%j", (name, value) => {
    expect(() => readConfig({ ...minimal, [name]: value })).toThrow(
      new Error(`${name} must be a URL (http:// or https://): '${value}'`),
    );
  });

  it("names JWT_ISSUER when the key set's URL, derived from it, would not be a URL", () => {
    expect(() => readConfig({ ...minimal, JWT_ISSUER: "plants-issuer" })).toThrow(
      "JWT_ISSUER must be a URL (http:// or https://): 'plants-issuer'",
    );
    expect(readConfig({ ...minimal, JWT_ISSUER: "https://idp.example/" }).jwksUrl).toBe(
      "https://idp.example/.well-known/jwks.json",
    );
  });

  it("takes AWS_ENDPOINT_URL_DYNAMODB before AWS_ENDPOINT_URL", () => {
    const both = { ...minimal, AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:8000/", AWS_ENDPOINT_URL: "x" };
    expect(readConfig(both).dynamoDbEndpoint).toBe("http://127.0.0.1:8000");
    expect(readConfig({ ...minimal, AWS_ENDPOINT_URL: "http://127.0.0.1:9000" }).dynamoDbEndpoint).toBe(
      "http://127.0.0.1:9000",
    );
  });
});
