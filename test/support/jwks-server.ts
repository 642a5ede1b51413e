import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type JwksBehaviour = "serve" | "fail" | "hang";

export interface JwksServer {
  url: string;
  /** How many times the key set was requested. */
  fetches(): number;
  setKeys(jwks: object): void;
  setBehaviour(behaviour: JwksBehaviour): void;
  close(): Promise<void>;
}

/** An issuer's JWKS endpoint on a loopback port, which a test can make fail or hang. */
export async function startJwksServer(jwks: object): Promise<JwksServer> {
  let keys = jwks;
  let behaviour: JwksBehaviour = "serve";
  let fetches = 0;
  const server: Server = createServer((_request, response) => {
    fetches++;
    if (behaviour === "hang") return; // never answers; the client must time out
    if (behaviour === "fail") {
      response.writeHead(500).end();
      return;
    }
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(keys));
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
