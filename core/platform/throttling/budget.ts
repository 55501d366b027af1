import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisClient } from '../queues/redis-connection.js';
import { budgetState, type BudgetState } from './rate-limit-headers.js';
import { createRedisLimiter } from './redis-limiter.js';

/** One budget as a feature declares it: the feature keeps only this and its own rules. */
export interface BudgetDeclaration {
  /**
   * Its keys in Redis are `<prefix>:rl:<name>:<subject>`. The deployment's prefix comes first
   * (hash-tagged on Redis Cluster), so every budget's keys live in the deployment's slot.
   */
  name: string;
  /** Requests allowed per window. */
  points: number;
  durationSeconds: number;
  /** Its name in the RateLimit headers (stable: clients may key on it); the budget's name when not given. */
  policy?: string;
  /**
   * Test clients' subjects count against budgets of their own (`test:` keys), so an integration
   * test never uses up a real person's budget, nor the other way round.
   */
  separateTestTraffic?: boolean;
}

/** Which subject a call is about, and the variations a budget allows. */
export interface SubjectOptions {
  /** The request came from a test client (only budgets that separate test traffic care). */
  test?: boolean;
}

export interface TakeOptions extends SubjectOptions {
  /** This take's window instead of the declared one (a gate closing for a growing delay). */
  durationSeconds?: number;
}

/** What taking a point did. */
export interface Taken {
  admitted: boolean;
  /** Points used in the current window, this one included (when admitted). */
  consumed: number;
  /** Milliseconds until the window starts over: the wait, when refused. */
  waitMs: number;
  /** Where the budget stands: what the RateLimit headers report. */
  state: BudgetState;
}

/**
 * A budget in Redis, shared by every API instance (an in-process budget of the same size stands
 * in while Redis is unreachable, so an outage never lifts the limits): take, give back and read
 * points per subject, with what the RateLimit headers and Retry-After need.
 */
export function createBudget(redis: RedisClient, prefix: string, declaration: BudgetDeclaration) {
  const { name, points, durationSeconds, policy = name, separateTestTraffic = false } = declaration;
  const limiter = createRedisLimiter(redis, `${prefix}:rl:${name}`, points, durationSeconds);
  const keyOf = (subject: string, options: SubjectOptions) => (separateTestTraffic && options.test === true ? `test:${subject}` : subject);
  const taken = (admitted: boolean, res: RateLimiterRes): Taken => ({
    admitted,
    consumed: res.consumedPoints,
    waitMs: res.msBeforeNext,
    state: budgetState(policy, points, durationSeconds, res),
  });

  /** Takes one point; refusal is an answer here, not an error. */
  async function take(subject: string, options: TakeOptions = {}): Promise<Taken> {
    const key = keyOf(subject, options);
    try {
      const res =
        options.durationSeconds === undefined
          ? await limiter.consume(key)
          : await limiter.consume(key, 1, { customDuration: options.durationSeconds });
      return taken(true, res);
    } catch (err) {
      if (err instanceof RateLimiterRes) return taken(false, err);
      throw err;
    }
  }

  return {
    declaration,
    take,

    /**
     * Takes one point and answers where the budget stands; when it is spent, throws what
     * `refused` makes of the wait and the budget's state (the feature words its own 429).
     */
    async consume(
      subject: string,
      refused: (waitMs: number, state: BudgetState) => Error,
      options: SubjectOptions = {},
    ): Promise<BudgetState> {
      const result = await take(subject, options);
      if (!result.admitted) throw refused(result.waitMs, result.state);
      return result.state;
    },

    /** Gives back a point taken for a request that turned out not to count. */
    async refund(subject: string, options: SubjectOptions = {}): Promise<void> {
      await limiter.reward(keyOf(subject, options), 1);
    },

    /** Points used in the current window (0 when none). */
    async peek(subject: string, options: SubjectOptions = {}): Promise<number> {
      return (await limiter.get(keyOf(subject, options)))?.consumedPoints ?? 0;
    },

    /** The subject's window starts over. */
    async reset(subject: string, options: SubjectOptions = {}): Promise<void> {
      await limiter.delete(keyOf(subject, options));
    },
  };
}

export type Budget = ReturnType<typeof createBudget>;
