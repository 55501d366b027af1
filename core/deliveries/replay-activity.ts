import type { ActivityInput } from '../activity/activity.repository.js';
import type { ReplayResult } from './delivery-replay.types.js';

interface EnterpriseShare {
  queued: string[];
  skipped: number;
}

/**
 * The activity entries of one replay: one per enterprise whose deliveries it selected, with that
 * enterprise's counts and the ids it queued, so the enterprise's activity (filtered by
 * `enterpriseId`) shows the replay. Ids that named no delivery belong to no enterprise and are
 * in no entry. A replay that selected no delivery at all is one entry without an enterprise.
 */
export function replayActivityEntries(result: ReplayResult, selected: number, comments: string | undefined): ActivityInput[] {
  const shares = new Map<string, EnterpriseShare>();
  const shareOf = (enterpriseId: string) => {
    let share = shares.get(enterpriseId);
    if (!share) shares.set(enterpriseId, (share = { queued: [], skipped: 0 }));
    return share;
  };
  for (const delivery of result.queued) shareOf(delivery.enterpriseId).queued.push(delivery.id);
  for (const skipped of result.skipped) if (skipped.enterpriseId !== undefined) shareOf(skipped.enterpriseId).skipped += 1;

  const entry = (replay: ActivityInput['replay'], deliveryIds: string[], enterpriseId?: string): ActivityInput => ({
    actor: { type: 'admin' },
    action: 'deliveries.replayed',
    ...(enterpriseId !== undefined ? { enterpriseId } : {}),
    replay,
    deliveryIds,
    comments,
  });
  if (shares.size === 0) return [entry({ selected, queued: result.queued.length, skipped: result.skipped.length }, [])];
  return [...shares].map(([enterpriseId, { queued, skipped }]) =>
    entry({ selected: queued.length + skipped, queued: queued.length, skipped }, queued, enterpriseId),
  );
}
