import type { RedisClient } from '../queues/redis-connection.js';
import { createBudget, type BudgetDeclaration } from './budget.js';

/** What counting one failure did. */
export interface FailureCounted {
  /** The failure came after the budget was spent (counted by another process, or while this one was not told). */
  refused: boolean;
  /** Milliseconds the subject must wait from now on: 0 while failures are left in the window. */
  waitMs: number;
}

/**
 * A budget of failures: only failures take points (in Redis, shared by every instance; an
 * in-process budget stands in while Redis is unreachable, as for every budget), and whether a
 * subject may try again is answered from this process's memory of the subjects whose budget it
 * saw spent. So a request that succeeds costs no Redis round trip, before or after its work; the
 * price is that another process learns of a spent budget only when the subject fails there too
 * (that failure is refused, and that process remembers it from then on).
 */
export function createFailureBudget(
  redis: RedisClient,
  prefix: string,
  declaration: BudgetDeclaration,
  options: { maxRemembered?: number } = {},
) {
  const { maxRemembered = 100_000 } = options;
  const budget = createBudget(redis, prefix, declaration);
  // Subject → when its wait ends (ms since the epoch).
  const spentUntil = new Map<string, number>();

  const remember = (subject: string, until: number, now: number) => {
    if (spentUntil.size >= maxRemembered && !spentUntil.has(subject)) {
      for (const [key, end] of spentUntil) if (end <= now) spentUntil.delete(key);
      // Still full (a flood of addresses): start over. The limit still holds, since Redis keeps
      // the counts: a forgotten subject is refused again at its next failure.
      if (spentUntil.size >= maxRemembered) spentUntil.clear();
    }
    spentUntil.set(subject, until);
  };

  return {
    declaration,

    /** True when this process knows of no spent budget: nothing to look up before a try. */
    isQuiet(): boolean {
      return spentUntil.size === 0;
    },

    /** Milliseconds until the subject may try again; 0 when this process knows of no spent budget for it. */
    waitMs(subject: string, now: number = Date.now()): number {
      const until = spentUntil.get(subject);
      if (until === undefined) return 0;
      if (until > now) return until - now;
      spentUntil.delete(subject);
      return 0;
    },

    /** Counts one failure; the one that spends the budget starts the wait, and this process remembers it. */
    async countFailure(subject: string, now: number = Date.now()): Promise<FailureCounted> {
      const taken = await budget.take(subject);
      const spent = !taken.admitted || taken.consumed >= declaration.points;
      if (!spent) return { refused: false, waitMs: 0 };
      remember(subject, now + taken.waitMs, now);
      return { refused: !taken.admitted, waitMs: taken.waitMs };
    },
  };
}

export type FailureBudget = ReturnType<typeof createFailureBudget>;
