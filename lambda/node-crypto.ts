type NodeCrypto = typeof import("node:crypto");

let loaded: NodeCrypto | undefined;

/**
 * node:crypto, loaded at its first use rather than with the bundle, so that importing the bundle outside
 * Lambda loads none of it; synchronously (process.getBuiltinModule, no ES module facade to build), so that
 * the init that uses it first (the delivered key set, the store's connection) is done before the first
 * request. The token check and the SigV4 signer share it.
 */
export function nodeCrypto(): NodeCrypto {
  loaded ??= process.getBuiltinModule("node:crypto");
  return loaded;
}
