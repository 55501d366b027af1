import type { RevokedTokensRepository } from './revoked-tokens.repository.js';
import { setNewest } from '../platform/bounded-map.js';

interface Checked {
  revoked: boolean;
  checkedAt: number;
  pending?: Promise<boolean>;
}

/**
 * Whether a JWT access token was revoked, asked of the store at most once per token per
 * `recheckMs`: a revocation takes effect in every process within that window, and a client
 * reusing its token pays one indexed read per window, not one per request. A revoked answer is
 * final, so it is never asked again. Bounded: the oldest entries go first.
 */
export class RevocationChecks {
  private readonly entries = new Map<string, Checked>();

  constructor(
    private readonly store: Pick<RevokedTokensRepository, 'isRevoked'>,
    private readonly recheckMs: number,
    private readonly maxEntries = 10000,
  ) {}

  isRevoked(jti: string, now = Date.now()): boolean | Promise<boolean> {
    const entry = this.entries.get(jti);
    if (entry?.revoked) return true;
    if (entry && now - entry.checkedAt < this.recheckMs) return entry.pending ?? entry.revoked;
    const pending = this.store.isRevoked(jti, new Date(now)).then(
      (revoked) => {
        // markRevoked may have run while this read was under way (the read can predate the
        // revocation's write): its answer stands.
        if (!this.entries.get(jti)?.revoked) this.remember(jti, { revoked, checkedAt: now });
        return revoked;
      },
      (err: unknown) => {
        // A failed read is not remembered: the next request asks again.
        if (!this.entries.get(jti)?.revoked) this.entries.delete(jti);
        throw err;
      },
    );
    this.remember(jti, { revoked: false, checkedAt: now, pending });
    return pending;
  }

  /** Marks a token revoked in this process at once (the process that revoked it). */
  markRevoked(jti: string, now = Date.now()): void {
    this.remember(jti, { revoked: true, checkedAt: now });
  }

  private remember(jti: string, checked: Checked): void {
    setNewest(this.entries, jti, checked, this.maxEntries);
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
