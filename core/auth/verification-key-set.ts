import { createLocalJWKSet, type JWK } from 'jose';

/** How often at most a process reads the stored keys again for tokens naming a key it does not know. */
export const KEY_SET_RELOAD_INTERVAL_MS = 5000;

/** The public keys a process accepts its own tokens by, ready for jose. */
export interface VerificationKeys {
  keySet: ReturnType<typeof createLocalJWKSet>;
  algorithms: string[];
  kids: Set<string>;
  jwks: JWK[];
}

/** The keys to verify a token naming `kid` by (the key set as known after any reload that may bring `kid`). */
export type VerificationKeySet = (kid: string | undefined) => Promise<VerificationKeys>;

const toVerificationKeys = (jwks: JWK[]): VerificationKeys => ({
  keySet: createLocalJWKSet({ keys: jwks }),
  algorithms: [...new Set(jwks.map((jwk) => jwk.alg as string))],
  kids: new Set(jwks.map((jwk) => jwk.kid as string)),
  jwks,
});

/**
 * The process's verification keys, one for all its token checks (every scope's bearer check and
 * introspection): its own keys (`ownJwks`, loaded on first use) plus the keys other processes
 * stored since (`storedJwks`), read when a token names a key this process does not know. Another
 * process may have made a key since this one started (a rolling change of
 * ACCESS_TOKEN_SIGNING_ALG). The read happens at most once per KEY_SET_RELOAD_INTERVAL_MS for the
 * whole process, so made-up key ids cannot make requests cost store reads; tokens arriving while a
 * read is under way wait for it rather than being refused. A known kid costs nothing new.
 */
export function createVerificationKeySet(
  ownJwks: () => Promise<JWK[]>,
  storedJwks?: () => Promise<JWK[]>,
  now: () => number = Date.now,
): VerificationKeySet {
  let known: Promise<VerificationKeys> | undefined;
  let reloading: Promise<VerificationKeys> | undefined;
  let reloadedAt = Number.NEGATIVE_INFINITY;

  const loaded = () => {
    if (!known) {
      const loading = ownJwks().then(toVerificationKeys);
      // A failed load is tried again by the next token.
      loading.catch(() => {
        if (known === loading) known = undefined;
      });
      known = loading;
    }
    return known;
  };

  async function reload(current: VerificationKeys, read: () => Promise<JWK[]>): Promise<VerificationKeys> {
    const added = (await read()).filter((jwk) => !current.kids.has(jwk.kid as string));
    if (added.length === 0) return current;
    const merged = toVerificationKeys([...current.jwks, ...added]);
    known = Promise.resolve(merged);
    return merged;
  }

  return async (kid) => {
    const current = await loaded();
    if (kid === undefined || current.kids.has(kid) || !storedJwks) return current;
    if (reloading) return reloading;
    if (now() - reloadedAt < KEY_SET_RELOAD_INTERVAL_MS) return current;
    reloadedAt = now();
    const underWay = reload(current, storedJwks).finally(() => {
      reloading = undefined;
    });
    reloading = underWay;
    return underWay;
  };
}
