import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * How the endpoint answers: the key set; a 500; never; or 200 with something that is not a key set
 * (an HTML error page, `{}`, the key set cut off halfway), as a misrouted or broken issuer does.
 */
export type JwksBehaviour = "serve" | "fail" | "hang" | "html" | "empty-object" | "truncated";

export interface JwksServer {
  url: string;
  /** How many times the key set was requested. */
  fetches(): number;
  setKeys(jwks: object): void;
  setBehaviour(behaviour: JwksBehaviour): void;
  close(): Promise<void>;
}

/** An issuer's JWKS endpoint on a loopback port, which a test can make fail or hang. */
export async function startJwksServer(
  jwks: object,
  initialBehaviour: JwksBehaviour = "serve",
): Promise<JwksServer> {
  let keys = jwks;
  let behaviour = initialBehaviour;
  let fetches = 0;
  const server: Server = createServer((_request, response) => {
    fetches++;
    const keySet = JSON.stringify(keys);
    switch (behaviour) {
      case "hang":
        return; // never answers; the client must time out
      case "fail":
        response.writeHead(500).end();
        return;
      case "html":
        response
          .writeHead(200, { "content-type": "text/html" })
          .end("<!doctype html><html><body><h1>Sign in</h1></body></html>");
        return;
      case "empty-object":
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
        return;
      case "truncated":
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(keySet.slice(0, Math.floor(keySet.length / 2)));
        return;
      case "serve":
        response.writeHead(200, { "content-type": "application/json" }).end(keySet);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    fetches: () => fetches,
    setKeys: (next) => {
      keys = next;
    },
    setBehaviour: (next) => {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
