import type { Redis } from 'ioredis';

/** A message the provider accepted, as the delivery row will record it. */
export interface SentOutcome {
  deliveryId: string;
  providerMessageId: string;
  /** Sends tried for this delivery, this one included. */
  attempts: number;
  sentAt: Date;
}

interface JournalEntry {
  p: string;
  a: number;
  t: number;
}

/**
 * Sent messages whose rows MongoDB may not show yet: one Redis hash, field = delivery id. The
 * dispatch worker writes an entry before its job ends (so the outcome is as durable as the job
 * itself) and removes it once the row says SENT; an entry left behind by a worker that died in
 * between is applied by the delivery sweeper, never sent again.
 */
export function createSentJournal(redis: Redis, prefix: string) {
  const key = `${prefix}:dispatch:sent`;
  const parse = (deliveryId: string, raw: string): SentOutcome => {
    const entry = JSON.parse(raw) as JournalEntry;
    return { deliveryId, providerMessageId: entry.p, attempts: entry.a, sentAt: new Date(entry.t) };
  };
  return {
    async write(outcome: SentOutcome): Promise<void> {
      const entry: JournalEntry = { p: outcome.providerMessageId, a: outcome.attempts, t: outcome.sentAt.getTime() };
      await redis.hset(key, outcome.deliveryId, JSON.stringify(entry));
    },

    /** The journaled outcomes among `deliveryIds`. */
    async find(deliveryIds: string[]): Promise<SentOutcome[]> {
      if (deliveryIds.length === 0) return [];
      const raws = await redis.hmget(key, ...deliveryIds);
      return deliveryIds.flatMap((id, i) => (raws[i] == null ? [] : [parse(id, raws[i] as string)]));
    },

    /** Entries written before `before`, up to about `limit` of them. */
    async olderThan(before: Date, limit: number): Promise<SentOutcome[]> {
      const found: SentOutcome[] = [];
      let cursor = '0';
      do {
        const [next, flat] = await redis.hscan(key, cursor, 'COUNT', 500);
        cursor = next;
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const outcome = parse(flat[i] as string, flat[i + 1] as string);
          if (outcome.sentAt < before) found.push(outcome);
        }
      } while (cursor !== '0' && found.length < limit);
      return found.slice(0, limit);
    },

    async forget(deliveryIds: string[]): Promise<void> {
      if (deliveryIds.length > 0) await redis.hdel(key, ...deliveryIds);
    },
  };
}

export type SentJournal = ReturnType<typeof createSentJournal>;
