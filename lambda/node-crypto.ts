type NodeCrypto = typeof import("node:crypto");

let loaded: NodeCrypto | undefined;

/**
 * node:crypto, for the token check and the SigV4 signer: loaded at first use (an import outside Lambda loads
 * none of it), synchronously, so the init that first needs it finishes that work before any request.
 */
export function nodeCrypto(): NodeCrypto {
  loaded ??= process.getBuiltinModule("node:crypto");
  return loaded;
}
