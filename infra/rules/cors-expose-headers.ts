import { CORS_EXPOSE_HEADERS } from "../cors.ts";
import { type DeployRule, finding, resourcesOfType } from "./deploy-rule.ts";

export const corsExposeHeaders: DeployRule = {
  id: "PlantStore-CorsExposesHeaders",
  behaviour:
    "A browser hides every answer header but the CORS-safelisted ones unless the API exposes it: without " +
    "ExposeHeaders a browser caller cannot honour Retry-After, see why its token was refused " +
    "(WWW-Authenticate) or quote the request id.",
  documentation:
    "Amazon API Gateway Developer Guide, 'Configuring CORS for an HTTP API' (exposeHeaders); the Fetch " +
    "standard's CORS-safelisted response headers",
  fix: `expose ${CORS_EXPOSE_HEADERS.join(", ")} (CORS_EXPOSE_HEADERS of infra/cors.ts) in the API's corsPreflight`,
  check({ template }) {
    return resourcesOfType(template, "AWS::ApiGatewayV2::Api").flatMap(([id, api]) => {
      const cors = api.Properties?.CorsConfiguration as { ExposeHeaders?: string[] } | undefined;
      if (cors === undefined) return [];
      const exposed = new Set((cors.ExposeHeaders ?? []).map((header) => header.toLowerCase()));
      const missing = CORS_EXPOSE_HEADERS.filter((header) => !exposed.has(header));
      if (missing.length === 0) return [];
      return finding(id, `CORS is on but does not expose ${missing.join(", ")}`);
    });
  },
};
