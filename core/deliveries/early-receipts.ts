import type { RedisClient } from '../platform/queues/redis-connection.js';
import type { SentOutcome } from './sent-journal.js';

/** A provider's final word on a message whose send is not recorded yet (a receipt, core/providers). */
export interface EarlyReceipt {
  state: 'DELIVERED' | 'FAILED';
  provider: string;
  channel?: 'SMS' | 'EMAIL';
  error?: string;
}

/** Applies the receipts that came before these sends; called once their rows say SENT (sent-outcomes.ts). */
export interface EarlyReceiptsOnSend {
  applyTo(outcomes: SentOutcome[]): Promise<void>;
}

/**
 * How long a receipt waits for its send. A send is normally recorded a millisecond after the
 * provider's answer; this covers a dispatch worker whose Redis writes stall for minutes.
 */
export const EARLY_RECEIPT_TTL_MS = 5 * 60_000;
/** A failure reason is kept up to this length while it waits, so that each id costs a few hundred bytes. */
const MAX_ERROR_LENGTH = 300;

interface StoredReceipt {
  s: EarlyReceipt['state'];
  p: string;
  c?: EarlyReceipt['channel'];
  e?: string;
}

function parse(raw: string): EarlyReceipt | undefined {
  try {
    const stored = JSON.parse(raw) as Partial<StoredReceipt>;
    if ((stored.s !== 'DELIVERED' && stored.s !== 'FAILED') || typeof stored.p !== 'string') return undefined;
    return {
      state: stored.s,
      provider: stored.p,
      ...(stored.c === 'SMS' || stored.c === 'EMAIL' ? { channel: stored.c } : {}),
      ...(typeof stored.e === 'string' ? { error: stored.e } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Receipts for provider message ids that neither a row nor the sent journal knows yet: the
 * provider called back before its answer reached the dispatch worker, or the message is another
 * sender's on a shared account (nothing is ever sent under that id, so its receipt expires).
 * One Redis key per id, with a TTL, under the queue prefix (a hash tag on a cluster, so a batch's
 * keys are read in one MGET). An id keeps its first receipt: of two receipts reaching a SENT row,
 * the first wins too (delivery-states.ts).
 */
export function createEarlyReceiptStore(redis: RedisClient, prefix: string, ttlMs = EARLY_RECEIPT_TTL_MS) {
  const keyOf = (providerMessageId: string) => `${prefix}:dispatch:early-receipt:${providerMessageId}`;

  return {
    /** Keeps the receipt under each id for `ttlMs`, unless that id already holds one. */
    async hold(providerMessageIds: string[], receipt: EarlyReceipt): Promise<void> {
      if (providerMessageIds.length === 0) return;
      const stored: StoredReceipt = {
        s: receipt.state,
        p: receipt.provider,
        ...(receipt.channel ? { c: receipt.channel } : {}),
        ...(receipt.error ? { e: receipt.error.slice(0, MAX_ERROR_LENGTH) } : {}),
      };
      const value = JSON.stringify(stored);
      const pipeline = redis.pipeline();
      for (const id of providerMessageIds) pipeline.set(keyOf(id), value, 'PX', ttlMs, 'NX');
      const replies = await pipeline.exec();
      const failed = replies?.find(([err]) => err);
      if (failed) throw failed[0];
    },

    /** The receipts held under these ids (one that does not parse counts as absent). */
    async find(providerMessageIds: string[]): Promise<Map<string, EarlyReceipt>> {
      const held = new Map<string, EarlyReceipt>();
      if (providerMessageIds.length === 0) return held;
      const raws = await redis.mget(...providerMessageIds.map(keyOf));
      providerMessageIds.forEach((id, i) => {
        const raw = raws[i];
        const receipt = raw == null ? undefined : parse(raw);
        if (receipt) held.set(id, receipt);
      });
      return held;
    },

    async drop(providerMessageIds: string[]): Promise<void> {
      if (providerMessageIds.length > 0) await redis.del(...providerMessageIds.map(keyOf));
    },
  };
}

export type EarlyReceiptStore = ReturnType<typeof createEarlyReceiptStore>;
