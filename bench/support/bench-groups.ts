import type { Connection } from 'mongoose';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { createGroup } from '../../core/groups/group-creation.js';
import { createGroupsRepository } from '../../core/groups/groups.repository.js';

/**
 * Creates a shared group (every enterprise's users may join it) straight in MongoDB, as
 * registerBenchClient registers clients: enrollments a benchmark posts name it as primaryGroup.
 */
export async function createBenchGroup(mongo: Connection, name: string): Promise<void> {
  await createGroup(
    { groups: createGroupsRepository(mongo), activity: createActivityRepository(mongo), logger: { warn: () => undefined } },
    { name },
  );
}
