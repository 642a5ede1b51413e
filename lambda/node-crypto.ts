type NodeCrypto = typeof import("node:crypto");

let loading: Promise<NodeCrypto> | undefined;
let loaded: NodeCrypto | undefined;

/**
 * node:crypto, loaded once on first use rather than with the bundle: the token check (its key set's keys)
 * and the SigV4 signer share it. In Lambda the first use is at init (the key-set prefetch and the store
 * prewarm), so a cold start's first request finds it loaded.
 */
export function loadNodeCrypto(): Promise<NodeCrypto> {
  loading ??= import("node:crypto").then((module) => {
    loaded = module;
    return module;
  });
  return loading;
}

/** node:crypto once loadNodeCrypto() has resolved; a caller reaching it earlier is a bug. */
export function loadedNodeCrypto(): NodeCrypto {
  if (loaded === undefined) throw new Error("node:crypto is used before it was loaded");
  return loaded;
}
