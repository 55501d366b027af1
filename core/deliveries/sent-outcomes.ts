import type { Logger } from '../logger/logger.js';
import type { DeliveriesRepository } from './deliveries.repository.js';
import type { SentJournal, SentOutcome } from './sent-journal.js';

export interface SentOutcomesDeps {
  journal: SentJournal;
  deliveries: Pick<DeliveriesRepository, 'markSentMany'>;
  logger: Logger;
  /**
   * How long sent outcomes gather before one bulk write. Jobs do not wait for it, so it only
   * delays the moment the status endpoint shows SENT; bigger batches cost MongoDB less per row.
   */
  lingerMs?: number;
  maxBatch?: number;
  /** Past this many unwritten outcomes (MongoDB slower than the sends), jobs wait for a write. */
  maxPending?: number;
}

export const SENT_OUTCOME_LINGER_MS = 20;

/** Rows first, journal entries after: an entry disappears only once its row says SENT. */
export async function applySentOutcomes(stores: Pick<SentOutcomesDeps, 'journal' | 'deliveries'>, outcomes: SentOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await stores.deliveries.markSentMany(outcomes);
  await stores.journal.forget(outcomes.map((outcome) => outcome.deliveryId));
}

/**
 * Records what providers accepted. A job's send is journaled in Redis before the job ends (one
 * round trip, as durable as the job), and delivery rows are updated from the journal in batches
 * afterwards, so a job does not hold its worker slot for a MongoDB write. If Redis refuses the
 * entry, the row is written directly instead: an outcome is never only in memory.
 */
export function createSentOutcomes(deps: SentOutcomesDeps) {
  const lingerMs = deps.lingerMs ?? SENT_OUTCOME_LINGER_MS;
  const maxBatch = deps.maxBatch ?? 500;
  const maxPending = deps.maxPending ?? 5000;
  const pending: SentOutcome[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;

  const apply = (outcomes: SentOutcome[]) => applySentOutcomes(deps, outcomes);

  async function writePending(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending.splice(0, maxBatch);
      try {
        await apply(batch);
      } catch (err) {
        // Still journaled: the delivery sweeper applies them once MongoDB answers again.
        deps.logger.warn({ err: (err as Error).message, outcomes: batch.length }, 'sent outcomes not written yet; left in the journal');
      }
    }
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    flushing ??= writePending().finally(() => {
      flushing = undefined;
      if (pending.length > 0) schedule();
    });
    return flushing;
  }

  function schedule(): void {
    if (timer === undefined && flushing === undefined) timer = setTimeout(() => void flush(), lingerMs);
  }

  return {
    /** Resolves once the outcome is durable (journaled, or written to the row). */
    async record(outcome: SentOutcome): Promise<void> {
      try {
        await deps.journal.write(outcome);
      } catch (err) {
        deps.logger.warn({ deliveryId: outcome.deliveryId, err: (err as Error).message }, 'sent outcome not journaled; writing the row directly');
        await deps.deliveries.markSentMany([outcome]);
        return;
      }
      pending.push(outcome);
      if (pending.length >= maxPending) await flush();
      else schedule();
    },

    /** The send an earlier run of this delivery's job recorded, if it is not on the row yet. */
    async journaled(deliveryId: string): Promise<SentOutcome | undefined> {
      return (await deps.journal.find([deliveryId]))[0];
    },

    /** Writes journaled outcomes to their rows now (a re-run job, the sweeper). */
    apply,

    /** Writes everything recorded so far (shutdown). */
    async close(): Promise<void> {
      while (pending.length > 0 || flushing !== undefined) await flush();
    },
  };
}

export type SentOutcomes = ReturnType<typeof createSentOutcomes>;
