import type { Connection } from 'mongoose';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { toUserDoc, userModel } from '../../core/users/users.repository.js';
import type { User } from '../../core/users/user.types.js';

/**
 * Stores an enrolled user directly in the test database, for tests of features that only need
 * one to exist (enrollment itself is tested through its HTTP route).
 */
export async function insertUser(mongo: Connection, fields: Partial<User> & { userId: string }): Promise<User> {
  const now = new Date();
  const user: User = {
    enterpriseId: DEFAULT_ENTERPRISE_ID,
    loginId: fields.userId,
    primaryGroup: 'retail',
    secondaryGroups: [],
    firstName: 'Test',
    lastName: 'User',
    status: 'ACTIVE',
    sourceType: 'SVC',
    clientId: 'fixture',
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
  const Users = await userModel(mongo);
  await Users.create(toUserDoc(user));
  return user;
}
