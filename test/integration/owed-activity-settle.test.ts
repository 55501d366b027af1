import type { Connection } from 'mongoose';
import type { CommandStartedEvent } from 'mongodb';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { owedActivityEntry } from '../../core/users/owed-activity.js';
import { createUsersRepository, userModel, type OwedActivityEntry } from '../../core/users/users.repository.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

// Taking settled entries off a user: the entries given go, any other stays, and the field goes
// once nothing is owed (the sweep's sparse index then leaves the user out), in one update when
// the entries given were all the user owed.
describe('settledOwedActivity', () => {
  let mongo: Connection;
  const updates: string[] = [];
  beforeAll(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('owedsettle'), { monitorCommands: 'true' }));
    mongo.getClient().on('commandStarted', (event: CommandStartedEvent) => {
      if (event.commandName === 'update') updates.push(String(event.command.update));
    });
  });
  afterAll(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  const entry = (comments: string, ahead?: OwedActivityEntry['ahead']): OwedActivityEntry => ({
    ...owedActivityEntry('user.blocked', { type: 'admin' }, new Date(), comments),
    ...(ahead ? { ahead } : {}),
  });
  const stored = async (userId: string): Promise<Record<string, unknown>> =>
    (await (await userModel(mongo)).collection.findOne({ enterpriseId: 'default', userId })) ?? {};

  async function owing(userId: string, entries: OwedActivityEntry[]) {
    await insertUser(mongo, { userId });
    const users = createUsersRepository(mongo);
    expect(await users.oweActivity({ enterpriseId: 'default', userId }, entries)).toBe(true);
    updates.length = 0;
    return users;
  }

  test('when the entries given are all the user owes, then the field is gone after one update', async () => {
    const only = entry('only');
    const users = await owing('settle-all', [only]);
    await users.settledOwedActivity({ enterpriseId: 'default', userId: 'settle-all' }, [only.id]);
    expect(await stored('settle-all')).not.toHaveProperty('owedActivity');
    expect(updates).toEqual(['users']);
  });

  test('when one id is on the user twice (a copy without ahead), then both copies go with it', async () => {
    const ahead = entry('twice', { change: 'passkey-added', key: 'pk1' });
    const copy = { ...ahead, ahead: undefined };
    delete copy.ahead;
    const users = await owing('settle-copies', [ahead, copy]);
    await users.settledOwedActivity({ enterpriseId: 'default', userId: 'settle-copies' }, [ahead.id]);
    expect(await stored('settle-copies')).not.toHaveProperty('owedActivity');
    expect(updates).toEqual(['users']);
  });

  test('when the user owes another entry too, then only the entries given go and the other stays', async () => {
    const settled = entry('settled');
    const other = entry('other');
    const users = await owing('settle-some', [settled, other]);
    await users.settledOwedActivity({ enterpriseId: 'default', userId: 'settle-some' }, [settled.id]);
    expect(((await stored('settle-some')).owedActivity as OwedActivityEntry[]).map((e) => e.id)).toEqual([other.id]);
  });
});
