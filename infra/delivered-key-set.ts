import { fileURLToPath } from "node:url";
import { CfnOutput, CustomResource, Duration, Fn, Lazy, RemovalPolicy, Stack } from "aws-cdk-lib";
import { PolicyDocument, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { type CfnFunction, type CfnVersion, Code, Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { buildSync } from "esbuild";
import type { ExternalIssuerConfig } from "./issuer-config.ts";
import {
  READER_ATTRIBUTES,
  READER_PROPERTIES,
  WORST_CASE_RUN_MS,
} from "./key-set-delivery/key-set-reader.ts";
import {
  DELIVERED_KEY_SET_VARIABLE,
  ENVIRONMENT_LIMIT_BYTES,
  environmentValueBytes,
  keyCount,
  keysLeftOutNote,
} from "./key-set-delivery/public-key-set.ts";
import { FUNCTION_BASICS } from "./own-function.ts";
import { OUTPUT_KEYS } from "./stack-outputs.ts";

export interface DeliveredKeySetProps {
  /** The function whose environment receives the key set as JWKS_JSON. */
  readonly handler: LambdaFunction;
  /** The issuer it trusts: its key set is read from its URL at every deploy, or given as a file at synth. */
  readonly issuer: ExternalIssuerConfig;
}

/**
 * A value CloudFormation resolves at deploy (a table name, the Cognito issuer URL, a client id) counts as
 * this many bytes when the environment is measured at synth: more than any of them can hold (a DynamoDB
 * table name has at most 255 characters, the issuer URL about 100, a client id at most 128).
 */
export const DEPLOY_TIME_VALUE_BYTES = 256;

/**
 * The issuer's key set, handed to the handler with its deployment (JWKS_JSON), so that a cold start
 * verifies its first token without asking the issuer (docs/DEPLOY.md, "Keys delivered at deploy time").
 *
 * From a URL, a custom resource reads it at every deploy (its properties change with every synth) and the
 * handler's published version carries the result's digest in its description: a version's properties
 * cannot change, so a changed key set publishes a new version, which CodeDeploy rolls out like new code.
 * From a file, the set is a literal of the template, checked at synth.
 */
export class DeliveredKeySet extends Construct {
  constructor(scope: Construct, id: string, { handler, issuer }: DeliveredKeySetProps) {
    super(scope, id);
    const budget = (): number => environmentBudget(handler);
    const file = issuer.keySetFile;
    let summary: string;
    if (file !== undefined) {
      handler.addEnvironment(DELIVERED_KEY_SET_VARIABLE, file.keySetJson);
      this.node.addValidation({ validate: () => fileOverBudget(file, budget()) });
      summary = `${keyCount(file.keySetJson)} keys delivered from ${file.path} (checked at synth)${keysLeftOutNote(file.keySetJson)}`;
    } else {
      // Without JWKS_URL the handler reads the issuer's well-known path (lambda/config.ts).
      const jwksUrl = issuer.jwksUrl ?? `${issuer.issuer.replace(/\/+$/, "")}/.well-known/jwks.json`;
      const reader = this.createReader();
      const resource = new CustomResource(this, "Resource", {
        resourceType: "Custom::DeliveredKeySet",
        serviceToken: reader.functionArn,
        // A reader that never answered would otherwise hold the deploy for CloudFormation's default hour.
        serviceTimeout: Duration.seconds(readerTimeout().toSeconds() + 60),
        properties: {
          [READER_PROPERTIES.jwksUrl]: jwksUrl,
          [READER_PROPERTIES.environmentBudget]: Lazy.number({ produce: budget }),
          [READER_PROPERTIES.synthesis]: new Date().toISOString(),
        },
      });
      handler.addEnvironment(DELIVERED_KEY_SET_VARIABLE, resource.getAttString(READER_ATTRIBUTES.keySet));
      const version = handler.currentVersion.node.defaultChild as CfnVersion;
      version.description = Fn.join(" ", [
        `${DELIVERED_KEY_SET_VARIABLE}:`,
        resource.getAttString(READER_ATTRIBUTES.digest),
      ]);
      summary = resource.getAttString(READER_ATTRIBUTES.summary);
    }
    new CfnOutput(Stack.of(this), OUTPUT_KEYS.deliveredKeySet, {
      value: summary,
      description: "The issuer's keys the function trusts at cold start without asking the issuer",
    });
  }

  /** The reader's function: inline code (no asset), its own log group, a role that may only write there. */
  private createReader(): LambdaFunction {
    const logGroup = new LogGroup(this, "ReaderLogGroup", {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The permission is part of the role itself (an inline policy), so the function's reference to the
    // role orders them, and the function needs no DependsOn beside it (cfn-lint W3005).
    const role = new Role(this, "ReaderRole", {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: "Plant Store key-set reader: writes to its own log group, nothing else",
      inlinePolicies: {
        WriteOwnLogGroup: new PolicyDocument({
          statements: [
            new PolicyStatement({
              actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
              resources: [logGroup.logGroupArn],
            }),
          ],
        }),
      },
    });
    const reader = new LambdaFunction(this, "Reader", {
      ...FUNCTION_BASICS,
      description: "Reads the issuer's key set at deploy time for the Plant Store handler (JWKS_JSON)",
      handler: "index.handler",
      code: Code.fromInline(readerSource()),
      memorySize: 128,
      timeout: readerTimeout(),
      role,
      logGroup,
    });
    (reader.node.defaultChild as CfnFunction).addDeletionOverride("DependsOn");
    return reader;
  }
}

/** Above the reader's worst case, so that it always answers CloudFormation before Lambda stops it. */
function readerTimeout(): Duration {
  return Duration.seconds(Math.ceil(WORST_CASE_RUN_MS / 1000) + 10);
}

const READER_ENTRY = fileURLToPath(new URL("./key-set-delivery/key-set-reader.ts", import.meta.url));

/** The reader bundled into one CommonJS file: Lambda names inline code index.js. */
export function readerSource(): string {
  const { outputFiles } = buildSync({
    entryPoints: [READER_ENTRY],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    minify: true,
    legalComments: "none",
    write: false,
  });
  const [source] = outputFiles;
  if (source === undefined) throw new Error(`esbuild produced nothing for ${READER_ENTRY}`);
  return source.text;
}

/**
 * The bytes left for JWKS_JSON's value in `handler`'s environment, measured as Lambda measures it (the
 * variables as one JSON object), each value resolved at deploy counted as DEPLOY_TIME_VALUE_BYTES.
 */
function environmentBudget(handler: LambdaFunction): number {
  // The L1 property as it resolves: `{ variables: { NAME: value } }`, a value unresolved at synth an object.
  const environment = Stack.of(handler).resolve((handler.node.defaultChild as CfnFunction).environment);
  const { variables = {} } = (environment ?? {}) as { variables?: object };
  const measured: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    measured[name] = typeof value === "string" ? value : "x".repeat(DEPLOY_TIME_VALUE_BYTES);
  }
  measured[DELIVERED_KEY_SET_VARIABLE] = "";
  return Math.max(0, ENVIRONMENT_LIMIT_BYTES - Buffer.byteLength(JSON.stringify(measured), "utf8"));
}

function fileOverBudget(source: { path: string; keySetJson: string }, budget: number): string[] {
  const bytes = environmentValueBytes(source.keySetJson);
  if (bytes <= budget) return [];
  return [
    `Context "jwks": the key set in ${source.path} takes ${bytes} bytes in the function's environment and ` +
      `${budget} are left (Lambda's ${ENVIRONMENT_LIMIT_BYTES} bytes, less the other variables): keep fewer ` +
      `keys in the file, or leave out "jwks" to have the key set read at deploy time`,
  ];
}
