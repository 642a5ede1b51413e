import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Output } from "@aws-sdk/client-cloudformation";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  accessTokenFrom,
  buildTokenRequest,
  fetchStackToken,
  NO_CREDENTIALS_MESSAGE,
  NO_REGION_MESSAGE,
  requireRegionAndCredentials,
  tokenIssuerOutputsFrom,
} from "../../local/stack-token.ts";

// The SDK clients are replaced: these tests must run without AWS credentials or network.
const aws = vi.hoisted(() => ({ describeStacks: vi.fn(), describeUserPoolClient: vi.fn() }));
vi.mock("@aws-sdk/client-cloudformation", () => ({
  CloudFormationClient: class {
    config = {
      region: async () => "eu-west-1",
      credentials: async () => ({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" }),
    };
    send(command: { input: unknown }): unknown {
      return aws.describeStacks(command.input);
    }
  },
  DescribeStacksCommand: class {
    input: unknown;
    constructor(input: unknown) {
      this.input = input;
    }
  },
}));
vi.mock("@aws-sdk/client-cognito-identity-provider", () => ({
  CognitoIdentityProviderClient: class {
    send(command: { input: unknown }): unknown {
      return aws.describeUserPoolClient(command.input);
    }
  },
  DescribeUserPoolClientCommand: class {
    input: unknown;
    constructor(input: unknown) {
      this.input = input;
    }
  },
}));

const cognitoOutputs: Output[] = [
  { OutputKey: "ApiUrl", OutputValue: "https://abc.execute-api.eu-west-1.amazonaws.com/plants" },
  {
    OutputKey: "TokenEndpoint",
    OutputValue: "https://plantstore-1a2b.auth.eu-west-1.amazoncognito.com/oauth2/token",
  },
  { OutputKey: "ClientId", OutputValue: "client123" },
  { OutputKey: "UserPoolId", OutputValue: "eu-west-1_Pool" },
  { OutputKey: "JwtIssuer", OutputValue: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Pool" },
];
const issuer = {
  tokenEndpoint: "https://plantstore-1a2b.auth.eu-west-1.amazoncognito.com/oauth2/token",
  clientId: "client123",
  userPoolId: "eu-west-1_Pool",
};

describe("tokenIssuerOutputsFrom", () => {
  it("picks the token endpoint, client id and user pool id", () => {
    expect(tokenIssuerOutputsFrom("PlantStore", cognitoOutputs)).toEqual(issuer);
  });

  it("explains that a bring-your-own-issuer stack has no user pool", () => {
    const outputs = [{ OutputKey: "JwtIssuer", OutputValue: "https://login.example.com" }];
    expect(() => tokenIssuerOutputsFrom("PlantStore", outputs)).toThrow(
      /verifies tokens from your own issuer https:\/\/login\.example\.com/,
    );
  });

  it("names the missing outputs", () => {
    const outputs = cognitoOutputs.filter((output) => output.OutputKey !== "ClientId");
    expect(() => tokenIssuerOutputsFrom("Other", outputs)).toThrow(
      /Stack "Other" lacks the outputs ClientId;/,
    );
    expect(() => tokenIssuerOutputsFrom("Empty", [])).toThrow(/TokenEndpoint, ClientId, UserPoolId/);
  });
});

describe("buildTokenRequest", () => {
  it("is a client-credentials grant for plants/write with HTTP Basic client authentication", () => {
    const request = buildTokenRequest(issuer, "s3cret");
    expect(request.url).toBe(issuer.tokenEndpoint);
    expect(request.init.method).toBe("POST");
    expect(request.init.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(request.init.headers.authorization).toBe(
      `Basic ${Buffer.from("client123:s3cret").toString("base64")}`,
    );
    expect(request.init.body).toBe("grant_type=client_credentials&scope=plants%2Fwrite");
    expect(Object.fromEntries(new URLSearchParams(request.init.body))).toEqual({
      grant_type: "client_credentials",
      scope: "plants/write",
    });
  });

  it("form-encodes the credentials before Basic encoding them (RFC 6749 2.3.1)", () => {
    const request = buildTokenRequest({ ...issuer, clientId: "a:b" }, "c d");
    const basicCredentials = request.init.headers.authorization?.replace("Basic ", "") ?? "";
    const decoded = Buffer.from(basicCredentials, "base64").toString();
    expect(decoded).toBe("a%3Ab:c%20d");
  });
});

describe("accessTokenFrom", () => {
  it("returns the access token of a 200 answer", () => {
    expect(accessTokenFrom(200, JSON.stringify({ access_token: "eyJ.a.b", token_type: "Bearer" }))).toBe(
      "eyJ.a.b",
    );
  });

  it("names the OAuth error of a refusal", () => {
    expect(() => accessTokenFrom(400, JSON.stringify({ error: "invalid_client" }))).toThrow(
      "Token endpoint answered 400 without an access token: invalid_client",
    );
  });

  it("refuses a 200 answer without a token, and a body that is not JSON", () => {
    expect(() => accessTokenFrom(200, "{}")).toThrow(/answered 200 without an access token/);
    expect(() => accessTokenFrom(502, "<html>Bad gateway</html>")).toThrow(/502.*<html>Bad gateway/);
  });
});

describe("fetchStackToken", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    aws.describeStacks.mockReset();
    aws.describeUserPoolClient.mockReset();
  });

  function mockAws(outputs: Output[] | Error) {
    aws.describeStacks.mockImplementation(async () => {
      if (outputs instanceof Error) throw outputs;
      return { Stacks: [{ StackName: "PlantStore", Outputs: outputs }] };
    });
    aws.describeUserPoolClient.mockResolvedValue({ UserPoolClient: { ClientSecret: "s3cret" } });
  }

  it("reads the outputs and the secret, then asks the token endpoint", async () => {
    mockAws(cognitoOutputs);
    const fetchMock = vi
      .spyOn(globalThis, "fetch")
      .mockResolvedValue(new Response(JSON.stringify({ access_token: "eyJ.token" }), { status: 200 }));

    await expect(fetchStackToken("PlantStore", "eu-west-1")).resolves.toBe("eyJ.token");

    expect(aws.describeStacks).toHaveBeenCalledWith({ StackName: "PlantStore" });
    expect(aws.describeUserPoolClient).toHaveBeenCalledWith({
      UserPoolId: "eu-west-1_Pool",
      ClientId: "client123",
    });
    const [url, init] = fetchMock.mock.calls[0] ?? [];
    expect(url).toBe(issuer.tokenEndpoint);
    expect(init).toMatchObject(buildTokenRequest(issuer, "s3cret").init);
  });

  it("says so when the stack does not exist", async () => {
    mockAws(new Error("Stack with id Nope does not exist"));
    await expect(fetchStackToken("Nope", "eu-west-1")).rejects.toThrow(/Stack "Nope" does not exist/);
  });

  it("does not ask Cognito when the stack uses its own issuer", async () => {
    mockAws([{ OutputKey: "JwtIssuer", OutputValue: "https://login.example.com" }]);
    await expect(fetchStackToken("PlantStore", "eu-west-1")).rejects.toThrow(/own issuer/);
    expect(aws.describeUserPoolClient).not.toHaveBeenCalled();
  });
});

describe("requireRegionAndCredentials", () => {
  const credentials = async () => ({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" });
  const noRegion = async (): Promise<string> => {
    throw new Error("Region is missing");
  };

  it("passes with a region and credentials", async () => {
    await expect(
      requireRegionAndCredentials({ region: async () => "eu-west-1", credentials }),
    ).resolves.toBeUndefined();
  });

  it("says what to do when the region is missing, before looking for credentials", async () => {
    const lookForCredentials = vi.fn(credentials);
    await expect(
      requireRegionAndCredentials({ region: noRegion, credentials: lookForCredentials }),
    ).rejects.toThrow(NO_REGION_MESSAGE);
    expect(lookForCredentials).not.toHaveBeenCalled();
  });

  it("says what to do when no provider has credentials, and keeps any other reason", async () => {
    const failingWith = (message: string) => async () => {
      throw new Error(message);
    };
    await expect(
      requireRegionAndCredentials({
        region: async () => "eu-west-1",
        credentials: failingWith("Could not load credentials from any providers"),
      }),
    ).rejects.toThrow(NO_CREDENTIALS_MESSAGE);
    await expect(
      requireRegionAndCredentials({
        region: async () => "eu-west-1",
        credentials: failingWith("The SSO session associated with this profile has expired"),
      }),
    ).rejects.toThrow("AWS credentials could not be loaded: The SSO session associated with this profile");
  });
});

describe("npm run token -- --stack, without AWS configuration", () => {
  const projectRoot = fileURLToPath(new URL("../..", import.meta.url));

  /** The real command in a child process, with an empty HOME and no AWS_* variable; no call gets out. */
  async function runTokenCommand(prepareHome: (home: string) => void = () => {}) {
    const home = mkdtempSync(join(tmpdir(), "plant-store-empty-home-"));
    try {
      prepareHome(home);
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(AWS_|npm_)/i.test(name)),
      );
      return await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          "npm",
          ["run", "--silent", "token", "--", "--stack"],
          { cwd: projectRoot, env: { ...env, HOME: home }, timeout: 30_000 },
          (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
        );
      });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }

  const sdkNoise = /Region is missing|Could not load credentials|Warning|at .*\.(js|ts):\d+/;

  it("prints that the region is missing and what to do, and no SDK warning", async () => {
    const { code, stdout, stderr } = await runTokenCommand();
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trim()).toBe(NO_REGION_MESSAGE);
    expect(stderr).not.toMatch(sdkNoise);
  }, 30_000);

  it("prints that credentials are missing and what to do when only a region is configured", async () => {
    const { code, stdout, stderr } = await runTokenCommand((home) => {
      mkdirSync(join(home, ".aws"));
      writeFileSync(join(home, ".aws", "config"), "[default]\nregion = eu-west-1\n");
    });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trim()).toBe(NO_CREDENTIALS_MESSAGE);
    expect(stderr).not.toMatch(sdkNoise);
  }, 30_000);
});
