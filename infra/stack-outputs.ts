/**
 * Names shared by the stack (which writes them) and `local/stack-token.ts` (which reads them).
 * Kept free of aws-cdk-lib so the token script loads quickly.
 */
export const DEFAULT_STACK_NAME = "PlantStore";

export const OUTPUT_KEYS = {
  apiUrl: "ApiUrl",
  /** Only with a custom domain whose DNS record the stack does not create. */
  customDomainTarget: "CustomDomainTarget",
  dashboardUrl: "DashboardUrl",
  deploymentApplication: "DeploymentApplication",
  deploymentGroup: "DeploymentGroup",
  tokenEndpoint: "TokenEndpoint",
  clientId: "ClientId",
  userPoolId: "UserPoolId",
  clientSecretCommand: "ClientSecretCommand",
  jwtIssuer: "JwtIssuer",
  tableName: "TableName",
  functionName: "FunctionName",
  functionLogGroupName: "FunctionLogGroupName",
  accessLogGroupName: "AccessLogGroupName",
  /** What the function was handed of the issuer's key set at deploy time, or why nothing. */
  deliveredKeySet: "DeliveredKeySet",
} as const;
