import type { Logger } from '../platform/logger/logger.js';
import { deliveriesSwept } from '../platform/metrics/business-metrics.js';
import type { DeliveriesRepository } from './deliveries.repository.js';
import type { Delivery } from './delivery.types.js';
import type { EarlyReceiptsOnSend } from './early-receipts.js';
import type { SentJournal, SentOutcome } from './sent-journal.js';
import { applySentOutcomes } from './sent-outcomes.js';

export interface SweeperDeps {
  deliveries: DeliveriesRepository;
  /** Sends journaled by dispatch workers (sent-outcomes.ts). */
  journal: SentJournal;
  /** Receipts that came before the sends it writes (early-receipts.ts). */
  earlyReceipts?: EarlyReceiptsOnSend;
  /** Queues a job for the delivery; false when one was already waiting or running. */
  enqueue: (deliveryId: string) => Promise<boolean>;
  logger: Logger;
  /** How long a row may stay QUEUED without progress before it is enqueued again. */
  graceMs: number;
  batchSize?: number;
}

/**
 * A live worker writes its journaled sends to the rows within milliseconds; entries older than
 * this were left by a worker that died in between (or written while MongoDB was unreachable).
 * The sweeper's clock judges the worker's: hosts a second apart only shift when that happens.
 */
const ORPHANED_SEND_AFTER_MS = 1000;

/** Writes every send journaled before `olderThan` to its row; the number written. */
export async function applyOrphanedSends(
  deps: Pick<SweeperDeps, 'deliveries' | 'journal' | 'earlyReceipts'>,
  olderThan: Date,
  batchSize: number,
): Promise<number> {
  let applied = 0;
  for (;;) {
    const orphaned = await deps.journal.olderThan(olderThan, batchSize);
    await applySentOutcomes(deps, orphaned);
    applied += orphaned.length;
    if (orphaned.length < batchSize) return applied;
  }
}

/**
 * Of rows the sweeper would re-enqueue, those the journal shows sent get the send written
 * instead; the rest are returned. Without the journal none is returned: any could have been sent
 * (and Redis is needed to enqueue anyway).
 */
async function unsentAmong(
  deps: SweeperDeps,
  stale: Delivery[],
  onJournalError: (err: unknown) => void,
): Promise<{ written: number; unsent: Delivery[] }> {
  let sent: SentOutcome[];
  try {
    sent = await deps.journal.find(stale.map((d) => d.id));
  } catch (err) {
    onJournalError(err);
    return { written: 0, unsent: [] };
  }
  await applySentOutcomes(deps, sent);
  const sentIds = new Set(sent.map((outcome) => outcome.deliveryId));
  return { written: sent.length, unsent: stale.filter((d) => !sentIds.has(d.id)) };
}

/**
 * One sweep: writes sends journaled by workers that died before updating the rows, ends rows
 * whose sending window closed (and drops the secrets FAILED rows kept for a replay), and re-enqueues rows left QUEUED past the grace period (Redis was
 * down at accept time, or a job was lost) unless the journal says they were sent. Enqueueing is
 * deduplicated by job id and the worker skips rows that already ended, so a sweep is always safe
 * to repeat, and several sweepers at once are too (every write is conditional).
 */
export async function sweepDeliveries(
  deps: SweeperDeps,
  now = new Date(),
): Promise<{ recovered: number; expired: number; requeued: number }> {
  const size = deps.batchSize ?? 500;
  const journalUnavailable = (err: unknown) => {
    deps.logger.warn({ err: (err as Error).message }, 'sweeper could not read or apply the sent journal; will retry');
    return undefined;
  };
  const orphaned = (await applyOrphanedSends(deps, new Date(now.getTime() - ORPHANED_SEND_AFTER_MS), size).catch(journalUnavailable)) ?? 0;
  // Expiry goes on without the journal: a send journaled meanwhile still wins (see markSentMany).
  const expired = await deps.deliveries.expireUnsent(now);
  // A FAILED row keeps its encrypted code for a replay only while it could still be sent.
  await deps.deliveries.dropEndedSecrets(now);
  const stale = await deps.deliveries.findStaleQueued(new Date(now.getTime() - deps.graceMs), now, size);
  const { written, unsent } = await unsentAmong(deps, stale, journalUnavailable);
  // Rows whose job is still waiting or running are touched too (they are in hand) but not counted:
  // the log says how many jobs this sweep actually queued.
  let requeued = 0;
  let handled = 0;
  for (const delivery of unsent) {
    try {
      if (await deps.enqueue(delivery.id)) requeued += 1;
      handled += 1;
    } catch (err) {
      deps.logger.warn({ deliveryId: delivery.id, err: (err as Error).message }, 'sweeper could not enqueue; will retry');
      break;
    }
  }
  if (handled > 0)
    await deps.deliveries.touch(
      unsent.slice(0, handled).map((d) => d.id),
      now,
    );
  const recovered = orphaned + written;
  if (recovered + expired + requeued > 0) deps.logger.info({ recovered, expired, requeued }, 'delivery sweep');
  // Each is work the normal path should have done: a steady rise says where it fails (operations.md).
  deliveriesSwept.inc({ outcome: 'requeued' }, requeued);
  deliveriesSwept.inc({ outcome: 'recovered' }, recovered);
  deliveriesSwept.inc({ outcome: 'expired' }, expired);
  return { recovered, expired, requeued };
}
