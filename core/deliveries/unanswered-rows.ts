import type { Logger } from '../platform/logger/logger.js';
import type { DeliveriesRepository } from './deliveries.repository.js';

const RETRY_EVERY_MS = 1000;
/** Past this the sweeper has long had its chance; holding on would only grow the set. */
const GIVE_UP_AFTER_MS = 10 * 60 * 1000;
const MAX_HELD = 20_000;

/**
 * Ends the rows of requests answered with an error after their insert failed with an unknown
 * outcome (the store may have applied it and died before answering). MongoDB is usually down
 * when that happens, so ids that cannot be ended at once are held and tried again every second
 * until it answers: normally long before the sweeper's grace period lets it send them.
 */
export function createUnansweredRows(deliveries: Pick<DeliveriesRepository, 'cancelUnanswered'>, logger: Logger) {
  const held = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;

  async function retry(): Promise<void> {
    timer = undefined;
    const now = Date.now();
    for (const [id, since] of held) if (now - since > GIVE_UP_AFTER_MS) held.delete(id);
    const ids = [...held.keys()].slice(0, 500);
    if (ids.length === 0) return;
    try {
      await deliveries.cancelUnanswered(ids);
      ids.forEach((id) => held.delete(id));
      logger.info({ ended: ids.length }, 'rows of failed requests ended');
    } catch {
      // Still down: try again below.
    }
    schedule();
  }

  function schedule(): void {
    if (timer || held.size === 0) return;
    timer = setTimeout(() => void retry(), RETRY_EVERY_MS);
    timer.unref();
  }

  return {
    async cancel(ids: string[]): Promise<void> {
      try {
        await deliveries.cancelUnanswered(ids);
      } catch (err) {
        logger.warn({ err: (err as Error).message, rows: ids.length }, 'rows of a failed request not ended yet; retrying');
        for (const id of ids) if (held.size < MAX_HELD) held.set(id, Date.now());
        schedule();
      }
    },
  };
}

export type UnansweredRows = ReturnType<typeof createUnansweredRows>;
