import type { IdempotencyClaim } from '../idempotency/idempotent-requests.js';
import type { ActivityRepository } from '../activity/activity.repository.js';
import { drawOwedEntry } from '../activity/owed-entries.js';
import type { Logger } from '../platform/logger/logger.js';
import type { Group, GroupsRepository } from './groups.repository.js';

/**
 * Creates a group, shared or an enterprise's own (409 when its owner has one of the name) and records it in the activity record, as every
 * other admin change is: who made the group an enrollment may name, and when. The group is stored
 * with the entry it owes and the entry written right after (owing-collection.ts): the answer does
 * not wait on the record, and an entry it refused is written by the enrollment worker's sweep.
 */
export async function createGroup(
  deps: {
    groups: Pick<GroupsRepository, 'createGroup' | 'findGroupCreatedBy' | 'owedActivity'>;
    activity: Pick<ActivityRepository, 'appendOnce'>;
    logger: Pick<Logger, 'warn'>;
  },
  input: { name: string; description?: string; enterpriseId?: string },
  claim?: IdempotencyClaim,
): Promise<Group> {
  // A retry resuming a request that died after creating the group answers that group, not 409.
  const done = claim?.resumed ? await deps.groups.findGroupCreatedBy(input.name, input.enterpriseId, claim.id) : undefined;
  const key = { name: input.name, owner: input.enterpriseId };
  if (done) {
    await deps.groups.owedActivity.settleAfterChange(deps, key);
    return done;
  }
  const group = await deps.groups.createGroup(input, drawOwedEntry('group.created', { type: 'admin' }, new Date()), claim?.id);
  await deps.groups.owedActivity.settleAfterChange(deps, key);
  return group;
}
