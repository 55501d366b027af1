import { importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { SIGNING_ALG } from './signing-key.service.js';

/** The claims of a verified enterprise (client_credentials) access token. */
export interface EnterpriseTokenClaims extends JWTPayload {
  client_id: string;
  jti: string;
  exp: number;
  scope?: string;
}

/**
 * Verifies an enterprise access token: our signature, issuer, audience, expiry, type `at+jwt`
 * (RFC 9068, which keeps other JWTs signed by the same key, such as OTP validation JWTs, out),
 * the client as subject (a user's token names the user and never reaches the enterprise API),
 * and a `jti` to revoke it by. Undefined for anything else.
 */
export function createEnterpriseTokenVerifier(
  publicJwk: () => Promise<JWK>,
  expected: { issuer: string; audience: string },
): (token: string) => Promise<EnterpriseTokenClaims | undefined> {
  let key: ReturnType<typeof importJWK> | undefined;
  const verificationKey = () => {
    key ??= publicJwk().then((jwk) => importJWK(jwk, SIGNING_ALG));
    key.catch(() => {
      key = undefined;
    });
    return key;
  };
  return async (token) => {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, await verificationKey(), { ...expected, typ: 'at+jwt', algorithms: [SIGNING_ALG] }));
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
