import { createLocalJWKSet, type JWK } from 'jose';
import type { SigningKeys } from './signing-key-chains.js';
import type { SigningKeyRing } from './signing-key-ring.js';

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
 * introspection): the published keys of its signing key ring, which follows rotations and reads
 * the store again, within its budget, when a token names a key this process does not know
 * (another process made it since). A known kid costs nothing new: the jose key set is built once
 * per change of the keys.
 */
export function createVerificationKeySet(ring: SigningKeyRing): VerificationKeySet {
  const built = new WeakMap<SigningKeys, VerificationKeys>();
  const verificationKeysOf = (keys: SigningKeys) => {
    let found = built.get(keys);
    if (!found) {
      found = toVerificationKeys(keys.all.map((key) => key.publicJwk));
      built.set(keys, found);
    }
    return found;
  };
  return async (kid) => {
    const known = verificationKeysOf(await ring.current());
    if (kid === undefined || known.kids.has(kid)) return known;
    return verificationKeysOf(await ring.forUnknownKid(kid));
  };
}
