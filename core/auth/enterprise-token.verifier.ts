import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { VerificationKeySet } from './verification-key-set.js';

/** The claims of a verified enterprise (client_credentials) access token. */
export interface EnterpriseTokenClaims extends JWTPayload {
  client_id: string;
  jti: string;
  exp: number;
  scope?: string;
}

/**
 * Verifies an enterprise access token: our signature (by any of our published keys), issuer, audience, expiry, type `at+jwt`
 * (RFC 9068, which keeps other JWTs signed by the same key, such as OTP validation JWTs, out),
 * the client as subject (a user's token names the user and never reaches the enterprise API),
 * and a `jti` to revoke it by. Undefined for anything else.
 *
 * The keys come from the process's one VerificationKeySet, which reads the stored keys again when
 * a token names a key this process does not know. When those keys cannot be read, the read's
 * error is thrown (never a silent refusal of a token that may be valid).
 */
export function createEnterpriseTokenVerifier(
  keysFor: VerificationKeySet,
  expected: { issuer: string; audience: string },
): (token: string) => Promise<EnterpriseTokenClaims | undefined> {
  return async (token) => {
    let kid: string | undefined;
    try {
      ({ kid } = decodeProtectedHeader(token));
    } catch {
      return undefined;
    }
    // Not caught: keys that cannot be read (the store is down) say nothing about the token, so
    // the caller answers "try again later" rather than refusing a token that may be valid.
    const { keySet, algorithms } = await keysFor(kid);
    let claims: JWTPayload;
    try {
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
