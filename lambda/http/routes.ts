/**
 * The operations the API serves, one row per operation of openapi/openapi.yaml's `paths` (a test checks
 * both ways). The function answers only these (create-handler.ts), the stack gives each a gateway route
 * (infra/plant-store-stack.ts) and names them in its alarms, and the local run answers API Gateway's own
 * 404 for anything else (local/local-api.ts).
 */
export const ROUTES = [
  { method: "POST", path: "/plants", operationId: "createPlant" },
] as const satisfies readonly RouteDefinition[];

/** The methods an HTTP API route can have, as API Gateway and the OpenAPI document (lower-cased) spell them. */
export type RouteMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS";

interface RouteDefinition {
  readonly method: RouteMethod;
  /** As in the OpenAPI document: `{name}` stands for one path segment. */
  readonly path: string;
  /** The operation's `operationId` in the OpenAPI document. */
  readonly operationId: string;
}

export type Route = (typeof ROUTES)[number];
export type OperationId = Route["operationId"];

/** The route of an operation. */
export function routeOf(operationId: OperationId): Route {
  const route = ROUTES.find((candidate) => candidate.operationId === operationId);
  if (route === undefined) throw new Error(`no route for the operation ${operationId}`);
  return route;
}

/** API Gateway's name of a route, e.g. `POST /plants`: its route key. */
export function routeKey({ method, path }: RouteDefinition): string {
  return `${method} ${path}`;
}

/** Every route's key, for descriptions and alarm texts: "POST /plants". */
export function describeRoutes(routes: readonly RouteDefinition[] = ROUTES): string {
  return routes.map(routeKey).join(", ");
}

/** The route a request's method and path are for, or undefined: the API has no such operation. */
export function matchRoute(method: string, path: string): Route | undefined {
  const segments = path.split("/");
  return ROUTES.find((route) => route.method === method && pathMatches(route.path.split("/"), segments));
}

function pathMatches(template: string[], segments: string[]): boolean {
  return (
    template.length === segments.length &&
    template.every((part, index) => {
      const segment = segments[index] ?? "";
      return /^\{[^}]+\}$/.test(part) ? segment !== "" : part === segment;
    })
  );
}
