import type { IdempotencyClaim } from '../idempotency/idempotent-requests.js';
import type { ActivityRepository } from '../activity/activity.repository.js';
import { drawOwedEntry } from '../activity/owed-entries.js';
import type { Logger } from '../platform/logger/logger.js';
import type { Group, GroupsRepository } from './groups.repository.js';

/**
 * Creates a group (409 when the name exists) and records it in the activity record, as every
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
  input: { name: string; description?: string },
  claim?: IdempotencyClaim,
): Promise<Group> {
  // A retry resuming a request that died after creating the group answers that group, not 409.
  const done = claim?.resumed ? await deps.groups.findGroupCreatedBy(input.name, claim.id) : undefined;
  if (done) {
    await deps.groups.owedActivity.settleAfterChange(deps, done.name);
    return done;
  }
  const group = await deps.groups.createGroup(input, drawOwedEntry('group.created', { type: 'admin' }, new Date()), claim?.id);
  await deps.groups.owedActivity.settleAfterChange(deps, group.name);
  return group;
}
