import type { JWTPayload } from 'jose';
import { setNewest } from '../platform/bounded-map.js';

/**
 * Remembers tokens whose signature, issuer, audience and type were already verified, until they
 * expire, so a client reusing its token does not pay a signature verification per request.
 * Bounded: the oldest entries go first. Expiry is still checked on every hit, and so is the key
 * that signed the token (`kid`), which a rotation may have removed since (a key retired at once).
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, { claims: JWTPayload; kid: string | undefined }>();

  constructor(private readonly maxEntries = 10000) {}

  /** The claims of `token` if verified before, it has not expired, and `keyStillValid` (when given) accepts the key that signed it. */
  get(token: string, nowSeconds = Date.now() / 1000, keyStillValid?: (kid: string | undefined) => boolean): JWTPayload | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    const { claims, kid } = entry;
    if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds || (keyStillValid && !keyStillValid(kid))) {
      this.entries.delete(token);
      return undefined;
    }
    return claims;
  }

  set(token: string, claims: JWTPayload, kid?: string): void {
    setNewest(this.entries, token, { claims, kid }, this.maxEntries);
  }
}
