import { SignJWT, importJWK } from 'jose';
import { OTP_JWT_TTL_SECONDS } from '../auth/signed-token-lifetimes.js';
import type { SigningKey } from '../auth/signing-key.service.js';

/**
 * Signs the proof of a successful validation: `sub` = userId, `enterprise_id` = its enterprise, `jti` = otpUuid,
 * audience = the calling client, with the authorization server's key, so relying parties verify it with the published
 * JWKS. The same userId may exist in two enterprises, so as in every token the enterprise goes beside the bare `sub`.
 */
/** What an OTP validation JWT states. */
export interface OtpJwtClaims {
  sub: string;
  enterpriseId: string;
  jti: string;
  clientId: string;
}

export function createOtpJwtSigner(getKey: () => Promise<SigningKey>, issuer: string) {
  return async (claims: OtpJwtClaims): Promise<string> => {
    const key = await getKey();
    const privateKey = await importJWK(key.privateJwk, key.alg);
    return new SignJWT({ purpose: 'otp_validation', enterprise_id: claims.enterpriseId })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(issuer)
      .setSubject(claims.sub)
      .setJti(claims.jti)
      .setAudience(claims.clientId)
      .setIssuedAt()
      .setExpirationTime(`${OTP_JWT_TTL_SECONDS}s`)
      .sign(privateKey);
  };
}
