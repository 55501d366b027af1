import type { JWTPayload } from 'jose';

/**
 * Remembers tokens whose signature, issuer, audience and type were already verified, until they
 * expire, so a client reusing its token does not pay an RSA verification per request. Bounded:
 * the oldest entries go first. Expiry is still checked on every hit.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, JWTPayload>();

  constructor(private readonly maxEntries = 10000) {}

  get(token: string, nowSeconds = Date.now() / 1000): JWTPayload | undefined {
    const claims = this.entries.get(token);
    if (!claims) return undefined;
    if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds) {
      this.entries.delete(token);
      return undefined;
    }
    return claims;
  }

  set(token: string, claims: JWTPayload): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, claims);
  }
}
