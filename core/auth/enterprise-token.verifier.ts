import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK, type JWTPayload } from 'jose';

/** The claims of a verified enterprise (client_credentials) access token. */
export interface EnterpriseTokenClaims extends JWTPayload {
  client_id: string;
  jti: string;
  exp: number;
  scope?: string;
}

/** How often at most a process reads the key set again for tokens naming a key it does not know. */
export const KEY_SET_RELOAD_INTERVAL_MS = 5000;

interface VerificationKeys {
  keySet: ReturnType<typeof createLocalJWKSet>;
  algorithms: string[];
  kids: Set<string>;
}

const toVerificationKeys = (jwks: JWK[]): VerificationKeys => ({
  keySet: createLocalJWKSet({ keys: jwks }),
  algorithms: [...new Set(jwks.map((jwk) => jwk.alg as string))],
  kids: new Set(jwks.map((jwk) => jwk.kid as string)),
});

/**
 * Verifies an enterprise access token: our signature (by any of our published keys), issuer, audience, expiry, type `at+jwt`
 * (RFC 9068, which keeps other JWTs signed by the same key, such as OTP validation JWTs, out),
 * the client as subject (a user's token names the user and never reaches the enterprise API),
 * and a `jti` to revoke it by. Undefined for anything else.
 *
 * A token naming a key this process does not know makes it read the stored keys again
 * (`reloadJwks`), at most once per KEY_SET_RELOAD_INTERVAL_MS: another process may have made a
 * key since this one loaded its own (a rolling change of ACCESS_TOKEN_SIGNING_ALG), while made-up
 * key ids cost no more than one store read per interval.
 */
export function createEnterpriseTokenVerifier(
  publicJwks: () => Promise<JWK[]>,
  expected: { issuer: string; audience: string },
  reloadJwks?: () => Promise<JWK[]>,
  now: () => number = Date.now,
): (token: string) => Promise<EnterpriseTokenClaims | undefined> {
  let keys: Promise<VerificationKeys> | undefined;
  let reloadedAt = Number.NEGATIVE_INFINITY;
  const verificationKeys = () => {
    keys ??= publicJwks().then(toVerificationKeys);
    keys.catch(() => {
      keys = undefined;
    });
    return keys;
  };
  /** The key set with the stored keys added, when `kid` is unknown and no reload ran lately. */
  async function keysKnowing(kid: string | undefined): Promise<VerificationKeys> {
    const current = await verificationKeys();
    if (kid === undefined || current.kids.has(kid) || !reloadJwks || now() - reloadedAt < KEY_SET_RELOAD_INTERVAL_MS) return current;
    reloadedAt = now();
    const stored = await reloadJwks();
    const added = stored.filter((jwk) => !current.kids.has(jwk.kid as string));
    if (added.length === 0) return current;
    const own = await publicJwks();
    const merged = toVerificationKeys([...own, ...added]);
    keys = Promise.resolve(merged);
    return merged;
  }
  return async (token) => {
    let claims: JWTPayload;
    try {
      const { keySet, algorithms } = await keysKnowing(decodeProtectedHeader(token).kid);
      ({ payload: claims } = await jwtVerify(token, keySet, { ...expected, typ: 'at+jwt', algorithms }));
    } catch {
      return undefined;
    }
    return isEnterpriseToken(claims) ? claims : undefined;
  };
}

export function isEnterpriseToken(claims: JWTPayload): claims is EnterpriseTokenClaims {
  const { client_id: clientId, jti, exp } = claims as { client_id?: unknown; jti?: unknown; exp?: unknown };
  return typeof clientId === 'string' && claims.sub === clientId && typeof jti === 'string' && typeof exp === 'number';
}
