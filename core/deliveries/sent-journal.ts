import type { RedisClient } from '../platform/queues/redis-connection.js';

/** A message the provider accepted, as the delivery row will record it. */
export interface SentOutcome {
  deliveryId: string;
  providerMessageId: string;
  /** Sends tried for this delivery, this one included. */
  attempts: number;
  /** The sending worker's clock. */
  sentAt: Date;
}

interface JournalEntry {
  p: string;
  a: number;
  t: number;
}

const JOURNAL_SEND = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
return redis.call('HLEN', KEYS[1])`;

type JournalRedis = RedisClient & {
  journalSend(key: string, byProviderId: string, deliveryId: string, entry: string, providerMessageId: string): Promise<number>;
};

function parse(deliveryId: string, raw: string): SentOutcome | undefined {
  try {
    const entry = JSON.parse(raw) as Partial<JournalEntry>;
    if (typeof entry.p !== 'string' || typeof entry.a !== 'number' || typeof entry.t !== 'number') return undefined;
    return { deliveryId, providerMessageId: entry.p, attempts: entry.a, sentAt: new Date(entry.t) };
  } catch {
    return undefined;
  }
}

/**
 * Sent messages whose rows MongoDB may not show yet: a Redis hash keyed by delivery id, and one
 * from provider message id to delivery id for delivery receipts that arrive first. The dispatch
 * worker writes an entry before its job ends and removes it once the row says SENT; an entry left
 * behind by a worker that died in between is applied by the delivery sweeper, never sent again.
 * The entry is as durable as the job's completion next to it: a Redis that loses its latest
 * writes (failover, `appendfsync everysec`) can make such a message go twice, never get lost.
 */
export function createSentJournal(redis: RedisClient, prefix: string) {
  // One script, one round trip per send: both entries and the journal's size. (A MULTI of the
  // same three commands cost the worker several times more CPU in ioredis.)
  if (!('journalSend' in redis)) redis.defineCommand('journalSend', { numberOfKeys: 2, lua: JOURNAL_SEND });
  const key = `${prefix}:dispatch:sent`;
  const byProviderId = `${prefix}:dispatch:sent-by-provider-id`;

  /** The journaled sends among `deliveryIds` (an entry that does not parse counts as absent). */
  async function find(deliveryIds: string[]): Promise<SentOutcome[]> {
    if (deliveryIds.length === 0) return [];
    const raws = await redis.hmget(key, ...deliveryIds);
    return deliveryIds.flatMap((id, i) => {
      const raw = raws[i];
      const outcome = raw == null ? undefined : parse(id, raw);
      return outcome ? [outcome] : [];
    });
  }

  return {
    /** Journals the send; resolves to the number of sends journaled and not yet on their rows. */
    async write(outcome: SentOutcome): Promise<number> {
      const entry: JournalEntry = { p: outcome.providerMessageId, a: outcome.attempts, t: outcome.sentAt.getTime() };
      const size = await (redis as JournalRedis).journalSend(
        key,
        byProviderId,
        outcome.deliveryId,
        JSON.stringify(entry),
        outcome.providerMessageId,
      );
      return Number(size);
    },

    find,

    async findByProviderMessageId(providerMessageId: string): Promise<SentOutcome | undefined> {
      const deliveryId = await redis.hget(byProviderId, providerMessageId);
      if (deliveryId === null) return undefined;
      const [outcome] = await find([deliveryId]);
      return outcome?.providerMessageId === providerMessageId ? outcome : undefined;
    },

    /** Sends journaled before `before`, up to about `limit`; entries that do not parse are dropped. */
    async olderThan(before: Date, limit: number): Promise<SentOutcome[]> {
      const found: SentOutcome[] = [];
      const malformed: string[] = [];
      let cursor = '0';
      do {
        const [next, flat] = await redis.hscan(key, cursor, 'COUNT', 500);
        cursor = next;
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const id = flat[i] as string;
          const outcome = parse(id, flat[i + 1] as string);
          if (!outcome) malformed.push(id);
          else if (outcome.sentAt < before) found.push(outcome);
        }
      } while (cursor !== '0' && found.length < limit);
      // Not written by this code (it writes nothing else there): kept, it would stop no sweep but
      // be scanned for ever.
      if (malformed.length > 0) await redis.hdel(key, ...malformed);
      return found.slice(0, limit);
    },

    async size(): Promise<number> {
      return redis.hlen(key);
    },

    async forget(outcomes: SentOutcome[]): Promise<void> {
      if (outcomes.length === 0) return;
      const replies = await redis
        .multi()
        .hdel(key, ...outcomes.map((outcome) => outcome.deliveryId))
        .hdel(byProviderId, ...outcomes.map((outcome) => outcome.providerMessageId))
        .exec();
      const failed = replies?.find(([err]) => err);
      if (failed) throw failed[0];
    },
  };
}

export type SentJournal = ReturnType<typeof createSentJournal>;
