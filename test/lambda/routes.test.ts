import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { toApiRequest } from "../../lambda/http/api-gateway.ts";
import { decodeParams, matchRoute, ROUTES, routeKey } from "../../lambda/http/routes.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS } from "../../support/events.ts";

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

interface DocumentedOperation {
  operationId?: unknown;
  security?: Record<string, string[]>[];
  responses?: Record<string, unknown>;
}

/** Every operation of the OpenAPI document as a row of the table: its scope and its 2xx status. */
function documentedRoutes() {
  const document = parse(readFileSync(new URL("../../openapi/openapi.yaml", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, DocumentedOperation>>;
  };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([key]) => HTTP_METHODS.includes(key))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        scope: operation.security?.[0]?.bearerAuth?.[0],
        status: Number(Object.keys(operation.responses ?? {}).find((status) => status.startsWith("2"))),
      })),
  );
}

const byKey = (routes: { method: string; path: string }[]) =>
  [...routes].sort((a, b) => `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`));

describe("the routes table", () => {
  it("is the OpenAPI document's operations, with their operationIds, scopes and success statuses", () => {
    expect(byKey([...ROUTES])).toEqual(byKey(documentedRoutes()));
    expect(new Set(ROUTES.map(routeKey)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map(({ operationId }) => operationId)).size).toBe(ROUTES.length);
  });

  it("matches every route's own method and path exactly, as API Gateway's routes do", () => {
    for (const route of ROUTES) {
      const path = route.path.replace(/\{[^}]+\}/g, "x");
      expect(matchRoute(route.method, path)?.route).toBe(route);
      for (const [method, other] of [
        [route.method.toLowerCase(), path],
        [route.method, `${path}/`],
        [route.method, path.toUpperCase()],
        [route.method, `${path}/1`],
        [route.method, ""],
      ]) {
        expect(matchRoute(method ?? "", other ?? "")?.route, `${method} ${other}`).not.toBe(route);
      }
    }
    expect(matchRoute("", "")).toBeUndefined();
  });

  it("gives a template's {name} segments to the operation percent-decoded, refusing a bad encoding by name", () => {
    expect(decodeParams({ id: "caf%C3%A9%2F1" })).toEqual({ id: "café/1" });
    expect(() => decodeParams({ id: "%E0%A4%A" })).toThrow(
      "the path parameter id is not valid percent-encoding",
    );
  });
});

describe.each(PAYLOAD_VERSIONS)("an ApiRequest from a payload %s event", (version) => {
  it("carries the method and the undecoded path from where that payload version writes them", () => {
    expect(toApiRequest(apiGatewayEvent(version))).toMatchObject({ method: "POST", path: "/plants" });
    const event = apiGatewayEvent(version) as unknown as Record<string, unknown> & {
      requestContext: Record<string, unknown>;
    };
    if (version === "2.0") {
      event.rawPath = "/plants/4%202";
      event.requestContext.http = { method: "GET", path: "/plants/4 2" };
    } else {
      event.path = "/plants/4%202";
      event.httpMethod = "GET";
    }
    expect(toApiRequest(event as never)).toMatchObject({ method: "GET", path: "/plants/4%202" });
  });
});

it("an event without a method or path has empty ones, which no route matches", () => {
  for (const event of [null, {}, { requestContext: null, rawPath: 5 }, { httpMethod: ["POST"], path: {} }]) {
    const request = toApiRequest(event as never);
    expect({ method: request.method, path: request.path }).toEqual({ method: "", path: "" });
    expect(matchRoute(request.method, request.path)).toBeUndefined();
  }
});
