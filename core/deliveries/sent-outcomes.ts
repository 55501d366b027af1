import { createGroupCommit, settleBulkWrite, STORE_BATCHING } from '../platform/batching/group-commit.js';
import type { Logger } from '../platform/logger/logger.js';
import type { DeliveriesRepository } from './deliveries.repository.js';
import type { EarlyReceiptsOnSend } from './early-receipts.js';
import type { SentJournal, SentOutcome } from './sent-journal.js';

export interface SentOutcomesDeps {
  journal: SentJournal;
  deliveries: Pick<DeliveriesRepository, 'markSentMany'>;
  /** Receipts that came before their sends, applied once the rows say SENT (early-receipts.ts). */
  earlyReceipts?: EarlyReceiptsOnSend;
  logger: Logger;
  /**
   * How long sent outcomes gather before one bulk write. Jobs do not wait for it, so it only
   * delays the moment the rows say SENT (the status endpoint and receipts read the journal
   * meanwhile). Bigger batches cost MongoDB less per row: in bench/dispatch-drain, 20 → 100 ms
   * took the MongoDB-wire server from 0.16 to 0.11 ms of CPU per message; 250 ms saved no more.
   */
  lingerMs?: number;
  /** A row write still unanswered after this long is given up (the journal keeps the send). */
  writeTimeoutMs?: number;
  /** Past this many sends journaled and not on their rows (MongoDB down or slow), sending pauses. */
  maxBacklog?: number;
}

export const SENT_OUTCOME_LINGER_MS = 100;
const MAX_ROWS_PER_WRITE = 500;

/**
 * Rows first, then the receipts that came before these sends, journal entries last: an entry
 * disappears only once its row says SENT and its early receipt was applied, so whoever writes the
 * entry again (the sweeper, a re-run job) also applies that receipt again (receipts are idempotent).
 */
export async function applySentOutcomes(
  stores: {
    journal: Pick<SentJournal, 'forget'>;
    deliveries: Pick<DeliveriesRepository, 'markSentMany'>;
    earlyReceipts?: EarlyReceiptsOnSend;
  },
  outcomes: SentOutcome[],
): Promise<void> {
  if (outcomes.length === 0) return;
  await stores.deliveries.markSentMany(outcomes);
  await stores.earlyReceipts?.applyTo(outcomes);
  await stores.journal.forget(outcomes);
}

/** Thrown before a send while the rows are too far behind; the job is retried later. */
export class SendBacklogError extends Error {}

/**
 * Records what providers accepted. A job's send is journaled in Redis before the job ends (one
 * round trip), and the rows are updated from the journal in batches afterwards, so a job does not
 * hold its worker slot for a MongoDB write. If Redis refuses the entry, the row is written
 * directly instead: an outcome is never only in memory.
 */
export function createSentOutcomes(deps: SentOutcomesDeps) {
  const maxBacklog = deps.maxBacklog ?? 100_000;
  const flushTimeoutMs = deps.writeTimeoutMs;
  // Failures are logged and swallowed here: every send in a batch is still journaled.
  const journaledRows = createGroupCommit<SentOutcome, void>(
    async (batch) => {
      try {
        await applySentOutcomes(deps, batch);
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message, outcomes: batch.length }, 'sent outcomes not written yet; left in the journal');
      }
      return batch.map(() => ({ ok: true, value: undefined }));
    },
    { maxBatch: MAX_ROWS_PER_WRITE, maxInFlight: 1, lingerMs: deps.lingerMs ?? SENT_OUTCOME_LINGER_MS, flushTimeoutMs },
  );
  // The fallback without a journal entry: the job waits for its row and fails if it cannot be written.
  const directRows = createGroupCommit<SentOutcome, void>(
    (batch) =>
      settleBulkWrite(
        batch.map((_, i) => i),
        batch.length,
        () => deps.deliveries.markSentMany(batch),
      ),
    { ...STORE_BATCHING, flushTimeoutMs },
  );
  const unwritten = new Set<Promise<void>>();
  let backlog = 0;

  return {
    /** Refuses a send while too many sends wait for their rows (checked again once over). */
    async admitSend(): Promise<void> {
      if (backlog <= maxBacklog) return;
      backlog = await deps.journal.size();
      if (backlog > maxBacklog) throw new SendBacklogError(`${backlog} sent messages are not on their delivery rows yet; sending paused`);
    },

    /** Resolves once the outcome is durable (journaled, or written to the row). */
    async record(outcome: SentOutcome): Promise<void> {
      try {
        backlog = await deps.journal.write(outcome);
      } catch (err) {
        deps.logger.warn(
          { deliveryId: outcome.deliveryId, err: (err as Error).message },
          'sent outcome not journaled; writing the row directly',
        );
        await directRows.submit(outcome);
        return;
      }
      const written: Promise<void> = journaledRows
        .submit(outcome)
        .catch((err: unknown) =>
          deps.logger.warn(
            { deliveryId: outcome.deliveryId, err: (err as Error).message },
            'sent outcome write timed out; left in the journal',
          ),
        )
        .finally(() => unwritten.delete(written));
      unwritten.add(written);
    },

    /** The send an earlier run of this delivery's job journaled, if it is not on the row yet. */
    async journaled(deliveryId: string): Promise<SentOutcome | undefined> {
      return (await deps.journal.find([deliveryId]))[0];
    },

    /** Writes journaled outcomes to their rows now (a re-run job). */
    apply: (outcomes: SentOutcome[]) => applySentOutcomes(deps, outcomes),

    /** Waits for the row writes of everything recorded so far (shutdown). */
    async close(): Promise<void> {
      await Promise.all([...unwritten]);
    },
  };
}

export type SentOutcomes = ReturnType<typeof createSentOutcomes>;
