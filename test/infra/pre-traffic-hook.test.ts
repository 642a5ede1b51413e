/**
 * The rollout's BeforeAllowTraffic hook (infra/pre-traffic-hook/) against the real function: the hook runs
 * with the AWS SDK clients it ships with, pointed at a loopback endpoint that answers CodeDeploy's and
 * Lambda's APIs as AWS does; Lambda's Invoke runs the built handler bundle in a fresh Node process, with
 * the environment Lambda would give the version, as tools/build-bundle.ts and the stack build it. What the
 * hook reports to CodeDeploy decides whether traffic ever reaches that version.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { CodeDeployClient } from "@aws-sdk/client-codedeploy";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aliasTargetOf } from "../../infra/pre-traffic-hook/app-spec.ts";
import { createPreTrafficHook } from "../../infra/pre-traffic-hook/hook.ts";
import { judgeProbeAnswer, noTokenProbeEvent } from "../../infra/pre-traffic-hook/probe.ts";
import { createTokenIssuer, generateSigningKey, LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { esbuildOptions, HANDLER_ENTRY } from "../../tools/bundle-options.ts";

const execFileAsync = promisify(execFile);
/** A fresh Node process importing the bundle: seconds, more on a busy machine. */
const INVOCATION_TIMEOUT_MS = 120_000;

const FUNCTION_NAME = "PlantStore-Handler1A2B3C4D-AbCdEfGh";
const TARGET_VERSION = "7";
const DEPLOYMENT_ID = "d-EXAMPLE12";
const HOOK_EXECUTION_ID = "hook-execution-1";
const REGION = "eu-west-1";

/** The AppSpec CloudFormation gives CodeDeploy for an alias update. */
const appSpecFor = (functionName: string, targetVersion: string) =>
  JSON.stringify({
    version: 0.0,
    Resources: [
      {
        LiveAlias: {
          Type: "AWS::Lambda::Function",
          Properties: {
            Name: functionName,
            Alias: "live",
            CurrentVersion: "6",
            TargetVersion: targetVersion,
          },
        },
      },
    ],
    Hooks: [{ BeforeAllowTraffic: "PlantStore-PreTrafficCheckFunction" }],
  });

/** What the loopback "AWS" answers and what it was asked. */
interface FakeAws {
  url: string;
  /** The AppSpec GetDeployment returns, or `undefined` for CodeDeploy's AccessDenied. */
  appSpec: string | undefined;
  /** The environment the invoked version runs with. */
  functionEnvironment: Record<string, string>;
  /** Lambda takes the Invoke and never answers it (a stalled connection). */
  invokeHangs: boolean;
  readonly invocations: { functionName: string; qualifier: string | null }[];
  readonly reports: { deploymentId: string; lifecycleEventHookExecutionId: string; status: string }[];
  close(): Promise<void>;
}

let bundleDirectory: string;
let bundlePath: string;
let jwks: JwksServer;
let aws: FakeAws;

beforeAll(async () => {
  bundleDirectory = await mkdtemp(join(tmpdir(), "plant-store-bundle-"));
  bundlePath = join(bundleDirectory, "index.mjs");
  await build({ ...esbuildOptions(), entryPoints: [HANDLER_ENTRY], outfile: bundlePath, logLevel: "silent" });
  jwks = await startJwksServer((await createTokenIssuer(TEST_ISSUER, await generateSigningKey())).jwks);
  aws = await startFakeAws();
}, 60_000);

afterAll(async () => {
  await aws?.close();
  await jwks?.close();
  if (bundleDirectory) await rm(bundleDirectory, { recursive: true, force: true });
});

/** The environment Lambda gives the published version, with the stack's variables. */
function versionEnvironment(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const environment: Record<string, string | undefined> = {
    PATH: process.env.PATH ?? "",
    AWS_LAMBDA_FUNCTION_NAME: FUNCTION_NAME,
    AWS_LAMBDA_FUNCTION_VERSION: TARGET_VERSION,
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
    AWS_SECRET_ACCESS_KEY: "secret",
    TABLE_NAME: "plants",
    JWT_ISSUER: TEST_ISSUER,
    JWKS_URL: jwks.url,
    JWT_CLIENT_IDS: LOCAL_CLIENT_ID,
    ...overrides,
  };
  return Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/**
 * Runs one invocation of the bundle as Lambda does: import (the init), then the handler with the event.
 * A throw in either is Lambda's `Unhandled` function error, its payload the error's type and message.
 */
async function invokeBundle(
  environment: Record<string, string>,
  payload: string,
): Promise<{ functionError: string | undefined; payload: string }> {
  const script = `
    const [bundlePath, event] = process.argv.slice(1);
    let answer;
    try {
      const { handler } = await import(bundlePath);
      answer = { payload: await handler(JSON.parse(event), { awsRequestId: crypto.randomUUID() }) };
    } catch (error) {
      answer = { functionError: "Unhandled", payload: { errorType: error.name, errorMessage: error.message } };
    }
    process.stdout.write("\\nANSWER " + JSON.stringify(answer) + "\\n");
    process.exit(0);
  `;
  const { stdout } = await execFileAsync(
    process.execPath,
    ["--input-type=module", "--eval", script, pathToFileURL(bundlePath).href, payload],
    { env: environment, maxBuffer: 16 * 1024 * 1024 },
  );
  const line = stdout.split("\n").find((text) => text.startsWith("ANSWER "));
  if (line === undefined) throw new Error(`the bundle printed no answer: ${stdout}`);
  const answer = JSON.parse(line.slice("ANSWER ".length)) as { functionError?: string; payload: unknown };
  return { functionError: answer.functionError, payload: JSON.stringify(answer.payload) };
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** CodeDeploy (JSON 1.1, X-Amz-Target) and Lambda's Invoke (REST), as the SDK clients call them. */
async function startFakeAws(): Promise<FakeAws> {
  const fake: Omit<FakeAws, "url" | "close"> = {
    appSpec: appSpecFor(FUNCTION_NAME, TARGET_VERSION),
    functionEnvironment: versionEnvironment(),
    invokeHangs: false,
    invocations: [],
    reports: [],
  };
  const server: Server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const invoke = url.pathname.match(/^\/2015-03-31\/functions\/([^/]+)\/invocations$/);
    if (invoke?.[1] !== undefined) {
      fake.invocations.push({
        functionName: decodeURIComponent(invoke[1]),
        qualifier: url.searchParams.get("Qualifier"),
      });
      if (fake.invokeHangs) return;
      const answer = await invokeBundle(fake.functionEnvironment, body);
      response.writeHead(200, {
        "content-type": "application/json",
        ...(answer.functionError === undefined ? {} : { "x-amz-function-error": answer.functionError }),
      });
      response.end(answer.payload);
      return;
    }
    const target = String(request.headers["x-amz-target"] ?? "");
    const json = (status: number, value: object) => {
      response.writeHead(status, { "content-type": "application/x-amz-json-1.1" }).end(JSON.stringify(value));
    };
    if (target === "CodeDeploy_20141006.GetDeployment") {
      if (fake.appSpec === undefined) {
        json(400, { __type: "AccessDeniedException", message: "not authorized to perform GetDeployment" });
        return;
      }
      json(200, {
        deploymentInfo: {
          deploymentId: (JSON.parse(body) as { deploymentId: string }).deploymentId,
          applicationName: "PlantStore-RolloutApplication",
          deploymentGroupName: "PlantStore-RolloutDeploymentGroup",
          computePlatform: "Lambda",
          revision: { revisionType: "AppSpecContent", appSpecContent: { content: fake.appSpec } },
        },
      });
      return;
    }
    if (target === "CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus") {
      const report = JSON.parse(body) as FakeAws["reports"][number];
      fake.reports.push(report);
      json(200, { lifecycleEventHookExecutionId: report.lifecycleEventHookExecutionId });
      return;
    }
    json(400, { __type: "UnknownOperationException", message: target });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

/** The hook as deployed, its SDK clients sent to the loopback endpoint; its log lines kept. */
function hookUnderTest(checkTimeoutMs?: number) {
  const clientConfig = {
    endpoint: aws.url,
    region: REGION,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    maxAttempts: 1,
  };
  const logLines: string[] = [];
  const run = createPreTrafficHook({
    codeDeploy: new CodeDeployClient(clientConfig),
    lambda: new LambdaClient(clientConfig),
    functionName: FUNCTION_NAME,
    now: () => new Date("2026-11-26T10:00:00Z"),
    log: (line) => logLines.push(line),
    checkTimeoutMs,
  });
  return {
    logLines,
    run: () => run({ DeploymentId: DEPLOYMENT_ID, LifecycleEventHookExecutionId: HOOK_EXECUTION_ID }),
  };
}

/** Runs the hook once with `setup` applied to the fake AWS; returns what it reported and invoked. */
async function deployOnce(setup: (fake: FakeAws) => void, checkTimeoutMs?: number) {
  aws.reports.length = 0;
  aws.invocations.length = 0;
  aws.appSpec = appSpecFor(FUNCTION_NAME, TARGET_VERSION);
  aws.functionEnvironment = versionEnvironment();
  aws.invokeHangs = false;
  setup(aws);
  const hook = hookUnderTest(checkTimeoutMs);
  await hook.run();
  return {
    reports: [...aws.reports],
    invocations: [...aws.invocations],
    log: hook.logLines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe("the pre-traffic hook, against the built handler bundle", () => {
  it(
    "lets a version through that answers a request without a token with the API's 401 and its challenge",
    async () => {
      const { reports, invocations, log } = await deployOnce(() => {});
      expect(invocations).toEqual([{ functionName: FUNCTION_NAME, qualifier: TARGET_VERSION }]);
      expect(reports).toEqual([
        {
          deploymentId: DEPLOYMENT_ID,
          lifecycleEventHookExecutionId: HOOK_EXECUTION_ID,
          status: "Succeeded",
        },
      ]);
      expect(log).toEqual([expect.objectContaining({ targetVersion: TARGET_VERSION, status: "Succeeded" })]);
    },
    INVOCATION_TIMEOUT_MS,
  );

  it(
    "fails the deployment of a version whose init refuses its configuration (no client ids or audiences)",
    async () => {
      const { reports, invocations, log } = await deployOnce((fake) => {
        fake.functionEnvironment = versionEnvironment({ JWT_CLIENT_IDS: undefined });
      });
      expect(invocations).toHaveLength(1);
      expect(reports.map((report) => report.status)).toEqual(["Failed"]);
      expect(String(log[0]?.reason)).toMatch(/the new version failed \(Unhandled\)/);
    },
    INVOCATION_TIMEOUT_MS,
  );

  it(
    "fails the deployment of a version deployed without its table",
    async () => {
      const { reports } = await deployOnce((fake) => {
        fake.functionEnvironment = versionEnvironment({ TABLE_NAME: undefined });
      });
      expect(reports.map((report) => report.status)).toEqual(["Failed"]);
    },
    INVOCATION_TIMEOUT_MS,
  );

  it("probes nothing and fails when the deployment moves another function's alias", async () => {
    const { reports, invocations, log } = await deployOnce((fake) => {
      fake.appSpec = appSpecFor("SomeoneElsesFunction", TARGET_VERSION);
    });
    expect(invocations).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(["Failed"]);
    expect(String(log[0]?.reason)).toMatch(/moves SomeoneElsesFunction/);
  });

  it("reports Failed within its check's time when the Invoke never answers, and no later", async () => {
    const { reports, invocations, log } = await deployOnce((fake) => {
      fake.invokeHangs = true;
    }, 300);
    expect(invocations).toHaveLength(1);
    expect(reports.map((report) => report.status)).toEqual(["Failed"]);
    expect(String(log[0]?.reason)).toMatch(/the check could not run: .*(Abort|abort)/);
  });

  it("reports Failed, never nothing, when it cannot read the deployment", async () => {
    const { reports, invocations, log } = await deployOnce((fake) => {
      fake.appSpec = undefined;
    });
    expect(invocations).toEqual([]);
    expect(reports.map((report) => report.status)).toEqual(["Failed"]);
    expect(String(log[0]?.reason)).toMatch(/the check could not run: AccessDeniedException/);
  });
});

describe("the probe's verdict", () => {
  const answer = (statusCode: number, headers: Record<string, string>, body: object) => ({
    functionError: undefined,
    payload: JSON.stringify({ statusCode, headers, body: JSON.stringify(body) }),
  });
  const challenge = { "www-authenticate": 'Bearer realm="plants"' };

  it("passes only a 401 with a Bearer challenge and the Error body", () => {
    expect(judgeProbeAnswer(answer(401, challenge, { error: 401, message: "missing token" }))).toEqual({
      passed: true,
    });
  });

  it.each([
    ["a version that lets a request without a token through", answer(201, {}, { id: 1 })],
    ["a 401 without a challenge", answer(401, {}, { error: 401, message: "no" })],
    ["a Basic challenge", answer(401, { "WWW-Authenticate": "Basic" }, { error: 401, message: "no" })],
    ["a 401 without the Error body", answer(401, challenge, { message: "Unauthorized" })],
    ["a 500", answer(500, {}, { error: 500, message: "internal error" })],
    ["an answer that is not JSON", { functionError: undefined, payload: "<html>" }],
    ["a timeout", { functionError: "Unhandled", payload: '{"errorMessage":"Task timed out"}' }],
  ])("fails %s", (_case, invocation) => {
    expect(judgeProbeAnswer(invocation).passed).toBe(false);
  });

  it("sends a request to the first route that carries no token and no plant to store", () => {
    const event = noTokenProbeEvent("probe-1", new Date("2026-11-26T10:00:00Z"));
    expect(event).toMatchObject({ version: "2.0", routeKey: "POST /plants", rawPath: "/plants", body: "{}" });
    expect(Object.keys(event.headers).map((name) => name.toLowerCase())).not.toContain("authorization");
  });
});

describe("the AppSpec's target", () => {
  it("is read from JSON or YAML, a number or a string", () => {
    expect(aliasTargetOf(appSpecFor("fn", "12"))).toEqual({
      functionName: "fn",
      alias: "live",
      targetVersion: "12",
    });
    const yaml = [
      "version: 0.0",
      "Resources:",
      "  - live:",
      "      Type: AWS::Lambda::Function",
      "      Properties: { Name: fn, Alias: live, CurrentVersion: 1, TargetVersion: 2 }",
    ].join("\n");
    expect(aliasTargetOf(yaml)).toEqual({ functionName: "fn", alias: "live", targetVersion: "2" });
  });

  it.each([
    ["no function", JSON.stringify({ version: 0.0, Resources: [] })],
    ["a target that is not a published version", appSpecFor("fn", "$LATEST")],
    ["not an AppSpec", "<html>"],
  ])("refuses %s", (_case, content) => {
    expect(() => aliasTargetOf(content)).toThrow();
  });
});
