import type { RevokedTokensRepository } from './revoked-tokens.repository.js';
import { RecheckedCache } from '../platform/rechecked-cache.js';

/**
 * Whether a JWT access token was revoked, asked of the store at most once per token per
 * `recheckMs`: a revocation takes effect in every process within that window, and a client
 * reusing its token pays one indexed read per window, not one per request. A revoked answer is
 * final, so it is never asked again. Bounded: the oldest entries go first.
 */
export class RevocationChecks {
  /** Per jti: whether it is revoked. */
  private readonly revoked: RecheckedCache<string, boolean>;

  constructor(store: Pick<RevokedTokensRepository, 'isRevoked'>, recheckMs: number, maxEntries = 10000) {
    this.revoked = new RecheckedCache({
      load: (jti: string, now: number) => store.isRevoked(jti, new Date(now)),
      recheckMs,
      maxEntries,
      // A revocation is never undone; one set by markRevoked while a read is under way also
      // outlives that read's answer (the read can predate the revocation's write).
      isFinal: (revoked) => revoked,
    });
  }

  isRevoked(jti: string, now = Date.now()): boolean | Promise<boolean> {
    return this.revoked.get(jti, now);
  }

  /** Marks a token revoked in this process at once (the process that revoked it). */
  markRevoked(jti: string, now = Date.now()): void {
    this.revoked.set(jti, true, now);
  }
}

/**
 * The process's revocation checks, built once by its composition root and shared by every
 * route's bearer check and by the revocation endpoint, so a token revoked through this process is
 * refused here at once.
 */
export function createRevocationChecks(store: Pick<RevokedTokensRepository, 'isRevoked'>, recheckMs: number): RevocationChecks {
  return new RevocationChecks(store, recheckMs);
}
