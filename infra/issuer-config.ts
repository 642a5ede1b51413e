/** The token issuer's options: the stack's own Cognito user pool (maybe a retained one), or the user's issuer. */
import { readFileSync } from "node:fs";
import { commaList } from "../lambda/comma-list.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import { ContextError, type ContextReader, check, onlyWith, parseUrl, text } from "./context-values.ts";
import { deliverableKeySet, KeySetRefusedError } from "./key-set-delivery/public-key-set.ts";
import { domainPrefixProblem } from "./rules/cognito-domain-prefix.ts";

/** Tokens come from the Cognito user pool the stack creates (or, with `userPoolId`, one a destroyed stack retained). */
export type CognitoIssuerConfig = Extract<ReturnType<typeof readTokenIssuer>, { kind: "cognito" }>;
/** Tokens come from an OIDC issuer the user brings; the stack creates no user pool. */
export type ExternalIssuerConfig = Extract<ReturnType<typeof readTokenIssuer>, { kind: "external" }>;

/**
 * The stack's own Cognito issuer, or with `-c issuer=…` the user's, with what each of them needs. The
 * pool's domain prefix, unique in its Region, is by default derived from the stack name and the stack's
 * unique id; a `-c jwks=` file is checked and made compact at synth (`keySetFile`), else the issuer's set
 * is read at deploy time.
 */
export function readTokenIssuer(read: ContextReader) {
  const issuer = text(read, "issuer");
  const [audience, clientIds, jwksUrl, jwks, requiredScope] = (
    ["audience", "clientIds", "jwksUrl", "jwks", "requiredScope"] as const
  ).map((key) => text(read, key));
  const domainPrefix = text(read, "cognitoDomainPrefix");
  if (issuer !== undefined) {
    if (domainPrefix !== undefined) {
      throw new ContextError(
        `Context "cognitoDomainPrefix" does not apply with "issuer": no user pool is created`,
      );
    }
    check(parseUrl(issuer)?.protocol === "https:", "issuer", "an https URL", issuer);
    if (jwksUrl !== undefined)
      check(parseUrl(jwksUrl)?.protocol === "https:", "jwksUrl", "an https URL", jwksUrl);
    // Without one of them any token the issuer signs, for any of its clients or APIs, would be accepted; a
    // deployed handler refuses to start without JWT_AUDIENCE or JWT_CLIENT_IDS (lambda/config.ts).
    if (commaList(audience).length === 0 && commaList(clientIds).length === 0) {
      throw new ContextError(
        `Context "issuer" needs "audience" (the accepted aud values) or "clientIds" (the accepted client_id ` +
          `values): without either, tokens the issuer signs for other clients and APIs would be accepted`,
      );
    }
    const keySetFile = jwks === undefined ? undefined : readKeySetFile(jwks);
    const scope = requiredScope ?? DEFAULT_REQUIRED_SCOPE;
    return {
      kind: "external" as const,
      issuer,
      audience,
      clientIds,
      jwksUrl,
      keySetFile,
      requiredScope: scope,
    };
  }
  onlyWith("issuer", "bring your own OIDC issuer", { audience, clientIds, jwksUrl, jwks, requiredScope });
  const prefixProblem = domainPrefix === undefined ? undefined : domainPrefixProblem(domainPrefix);
  if (prefixProblem !== undefined) {
    throw new ContextError(`Context "cognitoDomainPrefix" ${prefixProblem}, got "${domainPrefix}"`);
  }
  // The pool, app client and domain a destroyed stack retained: all three or none, since the handler
  // needs the client id and the token endpoint output the domain's prefix.
  const userPoolId = text(read, "userPoolId");
  const clientId = text(read, "userPoolClientId");
  if (userPoolId === undefined) {
    onlyWith("userPoolId", "a retained user pool", { userPoolClientId: clientId });
    return { kind: "cognito" as const, domainPrefix, retained: undefined };
  }
  const poolIdShape = /^[a-z]{2}(?:-[a-z]+)+-\d_[0-9A-Za-z]+$/.test(userPoolId);
  check(poolIdShape, "userPoolId", "a Cognito user pool id like eu-west-1_AbC123dEf", userPoolId);
  if (clientId === undefined || !/^[0-9a-z]{1,128}$/.test(clientId)) {
    throw new ContextError(
      `Context "userPoolId" needs "userPoolClientId": the retained pool's app client id (the ClientId output), got ${JSON.stringify(clientId)}`,
    );
  }
  if (domainPrefix === undefined) {
    throw new ContextError(
      'Context "userPoolId" needs "cognitoDomainPrefix": the prefix of the retained pool\'s domain (the first label of the TokenEndpoint output)',
    );
  }
  return { kind: "cognito" as const, domainPrefix, retained: { userPoolId, clientId, domainPrefix } };
}

/** `-c jwks=<file>`: a key-set document whose keys are all public; whether it fits is checked at synth. */
function readKeySetFile(path: string): { path: string; keySetJson: string } {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code;
    if (reason === undefined) throw new ContextError(`Context "jwks": ${path} is not JSON`);
    throw new ContextError(`Context "jwks" must name a readable key-set file, got "${path}" (${reason})`);
  }
  try {
    return { path, keySetJson: deliverableKeySet(document) };
  } catch (error) {
    if (!(error instanceof KeySetRefusedError)) throw error;
    throw new ContextError(`Context "jwks": the key set in ${path} is refused: ${error.message}`);
  }
}
