import { DEFAULT_REQUIRED_SCOPE } from "../defaults.ts";
import { ApiError } from "../errors.ts";

/**
 * The operations the API serves, one row per operation of openapi/openapi.yaml's `paths` (a test checks
 * both ways, scope and status included). The function answers only these (create-handler.ts), the stack
 * gives each a gateway route (infra/plant-store-stack.ts) and names them in its alarms, and the local run
 * answers API Gateway's own 404 for anything else.
 */
export const ROUTES = [
  { method: "POST", path: "/plants", operationId: "createPlant", scope: DEFAULT_REQUIRED_SCOPE, status: 200 },
] as const satisfies readonly RouteDefinition[];

/** The methods an HTTP API route can have, as API Gateway and the OpenAPI document (lower-cased) spell them. */
export type RouteMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS";

interface RouteDefinition {
  readonly method: RouteMethod;
  /** As in the OpenAPI document: `{name}` stands for one path segment, given to the operation decoded. */
  readonly path: string;
  /** The operation's `operationId` in the OpenAPI document. */
  readonly operationId: string;
  /** The OAuth scope a token must carry: the operation's `security` scope in the document. */
  readonly scope: string;
  /** The status of its success answer: the document's 2xx response. */
  readonly status: number;
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
export function routeKey({ method, path }: Pick<RouteDefinition, "method" | "path">): string {
  return `${method} ${path}`;
}

/** Every route's key, for descriptions and alarm texts: "POST /plants". */
export function describeRoutes(routes: readonly RouteDefinition[] = ROUTES): string {
  return routes.map(routeKey).join(", ");
}

export interface RouteMatch {
  route: Route;
  /** The path's `{name}` segments, as sent (percent-encoded). */
  rawParams: Record<string, string>;
}

/** The route a request's method and raw path are for, with its path parameters; undefined for none. */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  const segments = path.split("/");
  for (const route of ROUTES) {
    const template = route.path.split("/");
    if (route.method !== method || template.length !== segments.length) continue;
    const rawParams: Record<string, string> = {};
    const matches = template.every((part, index) => {
      const segment = segments[index] ?? "";
      const name = /^\{([^}]+)\}$/.exec(part)?.[1];
      if (name === undefined) return part === segment;
      rawParams[name] = segment;
      return segment !== "";
    });
    if (matches) return { route, rawParams };
  }
  return undefined;
}

/** The path parameters as the operation reads them, decoded; one that is not valid percent-encoding is a 400. */
export function decodeParams(rawParams: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, segment] of Object.entries(rawParams)) {
    try {
      params[name] = decodeURIComponent(segment);
    } catch {
      throw new ApiError("BadRequest", `the path parameter ${name} is not valid percent-encoding`);
    }
  }
  return params;
}
