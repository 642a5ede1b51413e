import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { toApiRequest } from "../../lambda/http/api-gateway.ts";
import { matchRoute, ROUTES, routeKey, routeOf } from "../../lambda/http/routes.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS } from "../../support/events.ts";

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every operation of the OpenAPI document: method, path and operationId. */
function documentedOperations(): { method: string; path: string; operationId: unknown }[] {
  const document = parse(readFileSync(new URL("../../openapi/openapi.yaml", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { operationId?: unknown }>>;
  };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([key]) => HTTP_METHODS.includes(key))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
      })),
  );
}

const byKey = (routes: { method: string; path: string }[]) =>
  [...routes].sort((a, b) => `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`));

describe("the routes table", () => {
  it("is the OpenAPI document's operations, no more and no fewer, with their operationIds", () => {
    const documented = documentedOperations();
    expect(documented.length).toBeGreaterThan(0);
    expect(byKey([...ROUTES])).toEqual(byKey(documented));
  });

  it("names each operation once, and each route once", () => {
    expect(new Set(ROUTES.map(({ operationId }) => operationId)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map(routeKey)).size).toBe(ROUTES.length);
    expect(routeOf("createPlant")).toEqual({ method: "POST", path: "/plants", operationId: "createPlant" });
  });

  it("matches a request's method and path exactly, as API Gateway's routes do", () => {
    expect(matchRoute("POST", "/plants")?.operationId).toBe("createPlant");
    for (const [method, path] of [
      ["GET", "/plants"],
      ["post", "/plants"],
      ["POST", "/plants/"],
      ["POST", "/Plants"],
      ["POST", "/plants/1"],
      ["POST", "/"],
      ["POST", ""],
      ["", ""],
    ] as const) {
      expect(matchRoute(method, path), `${method} ${path}`).toBeUndefined();
    }
  });
});

describe.each(PAYLOAD_VERSIONS)("an ApiRequest from a payload %s event", (version) => {
  it("carries the method and the path the client sent", () => {
    const request = toApiRequest(apiGatewayEvent(version));
    expect({ method: request.method, path: request.path }).toEqual({ method: "POST", path: "/plants" });
  });

  it("reads them from where that payload version writes them", () => {
    const event = apiGatewayEvent(version) as unknown as Record<string, unknown> & {
      requestContext: Record<string, unknown>;
    };
    if (version === "2.0") {
      event.rawPath = "/plants/42";
      event.requestContext.http = { method: "GET", path: "/plants/42" };
    } else {
      event.path = "/plants/42";
      event.httpMethod = "GET";
    }
    const request = toApiRequest(event as never);
    expect({ method: request.method, path: request.path }).toEqual({ method: "GET", path: "/plants/42" });
  });
});

it("an event without a method or path has empty ones, which no route matches", () => {
  for (const event of [null, {}, { requestContext: null, rawPath: 5 }, { httpMethod: ["POST"], path: {} }]) {
    const request = toApiRequest(event as never);
    expect({ method: request.method, path: request.path }).toEqual({ method: "", path: "" });
    expect(matchRoute(request.method, request.path)).toBeUndefined();
  }
});
