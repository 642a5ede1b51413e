import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage } from "aws-cdk-lib";
import { Code } from "aws-cdk-lib/aws-lambda";
import { buildSync } from "esbuild";
import { HANDLER_EXPORT, HANDLER_FILE, handlerBundleOptions } from "../tools/bundle-options.ts";

/** Lambda's handler setting for the bundle: `index.handler`. */
export const HANDLER_SETTING = `${HANDLER_FILE.replace(/\.mjs$/, "")}.${HANDLER_EXPORT}`;

const LAMBDA_SOURCES = fileURLToPath(new URL("../lambda/", import.meta.url));

/**
 * The function's code: the bundle tools/bundle-options.ts describes (the local run's, with its chunks),
 * built by esbuild on this machine straight into the asset the CDK stages, as NodejsFunction does with its
 * one file. Its hash is the output's, so an unchanged bundle deploys no new code. The image is never
 * pulled: the local build always succeeds or throws.
 */
export function handlerCode(): Code {
  return Code.fromAsset(LAMBDA_SOURCES, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:24"),
      local: {
        tryBundle(outputDirectory) {
          buildSync(handlerBundleOptions(outputDirectory));
          return true;
        },
      },
    },
  });
}
