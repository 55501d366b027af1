/**
 * One place held in a pool every enterprise of an API process draws from (its event streams, its
 * waiting requests).
 */
export interface SharedPlace {
  /** Gives the place back; later calls do nothing. */
  release(): void;
  /**
   * From now on another enterprise may take this place back when the pool is full and this one's
   * enterprise holds more than its share: the place is released and `letGo` must end its use
   * (the stream ends, the waiting request is answered at once). Until then it is never taken back:
   * a holder still setting up has nothing to end.
   */
  lendable(letGo: () => void): void;
}

/** Why no place was given: the pool is full, or full and the enterprise already holds its share. */
export type ShareRefusal = 'process-full' | 'enterprise-share';

export interface EnterpriseShares {
  /** A place for one of `enterpriseId`'s holders, or why not (the caller answers 503 or at once). */
  take(enterpriseId: string): SharedPlace | ShareRefusal;
  /** Places held now. */
  held(): number;
  /** Places one enterprise holds now. */
  heldBy(enterpriseId: string): number;
}

interface Holding {
  letGo?: () => void;
  release(): void;
}

/**
 * A pool of `capacity` places shared fairly between enterprises. While places are free anyone
 * takes one, so an enterprise alone (a deployment of one enterprise) can use the whole pool as
 * before. When the pool is full, an enterprise holding less than `sharePercent` of it takes the
 * oldest lendable place of the enterprise holding the most above that share; an enterprise at or
 * above its share is refused. So no enterprise, however many users it activates or requests it
 * sends, keeps another out of its share: without this one enterprise could take all of a
 * process's places and every other enterprise's users would be refused until those ended.
 * Enterprise ids stay in this process's memory only (one entry per enterprise holding places).
 */
export function createEnterpriseShares(options: { capacity: number; sharePercent: number }): EnterpriseShares {
  const share = Math.max(1, Math.floor((options.capacity * options.sharePercent) / 100));
  // Each enterprise's holdings, oldest first (a Set keeps insertion order).
  const byEnterprise = new Map<string, Set<Holding>>();
  let total = 0;

  /** The oldest lendable holding of the enterprise furthest above its share, if any is above. */
  const reclaimable = (): Holding | undefined => {
    let most = share;
    let from: Set<Holding> | undefined;
    for (const holdings of byEnterprise.values()) {
      if (holdings.size > most && [...holdings].some((h) => h.letGo)) {
        most = holdings.size;
        from = holdings;
      }
    }
    return from && [...from].find((h) => h.letGo);
  };

  const grant = (enterpriseId: string): SharedPlace => {
    const holdings = byEnterprise.get(enterpriseId) ?? new Set<Holding>();
    byEnterprise.set(enterpriseId, holdings);
    total += 1;
    const holding: Holding = {
      release() {
        if (!holdings.delete(holding)) return;
        total -= 1;
        if (holdings.size === 0 && byEnterprise.get(enterpriseId) === holdings) byEnterprise.delete(enterpriseId);
      },
    };
    holdings.add(holding);
    return {
      release: () => holding.release(),
      lendable: (letGo) => {
        holding.letGo = letGo;
      },
    };
  };

  return {
    take(enterpriseId) {
      if (total < options.capacity) return grant(enterpriseId);
      const mine = byEnterprise.get(enterpriseId)?.size ?? 0;
      // Alone in a full pool, the enterprise meets the pool's own limit, not a share of it.
      const othersHold = mine < total;
      if (mine >= share) return othersHold ? 'enterprise-share' : 'process-full';
      const victim = reclaimable();
      if (!victim) return 'process-full';
      victim.release();
      victim.letGo?.();
      return grant(enterpriseId);
    },
    held: () => total,
    heldBy: (enterpriseId) => byEnterprise.get(enterpriseId)?.size ?? 0,
  };
}
