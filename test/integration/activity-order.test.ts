import { Types, type Connection } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';

// Entries come from several processes (API, workers, the admin CLI). An ObjectId orders entries
// of different processes only to the second (its next bytes are random per process), so the
// record's order is its time, with the id breaking ties of one millisecond.
describe('activity record order', () => {
  let mongo: Connection;
  beforeAll(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('activityorder')));
  });
  afterAll(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  /** An id another process would make in `second`: the largest possible process bytes. */
  const idOfOtherProcess = (second: number) => new Types.ObjectId(second.toString(16).padStart(8, '0') + 'ffffffffffffffff');

  test('when another process wrote an entry earlier in the same second, then the later entry still comes first', async () => {
    const activity = createActivityRepository(mongo);
    const now = Date.now();
    const earlier = new Date(now - 1);
    await mongo.collection('activity').insertOne({
      _id: idOfOtherProcess(Math.floor(now / 1000)),
      actor: { type: 'user' },
      action: 'user.sign-in-locked',
      enterpriseId: 'default',
      userId: 'ana',
      at: earlier,
    });
    await activity.append(
      { actor: { type: 'admin' }, action: 'user.sign-in-unlocked', enterpriseId: 'default', userId: 'ana' },
      new Date(now),
    );
    const { entries } = await activity.list({ scope: { enterpriseId: 'default' }, userId: 'ana', limit: 10 });
    expect(entries.map((entry) => entry.action)).toEqual(['user.sign-in-unlocked', 'user.sign-in-locked']);
  });

  test('when pages are read with `before`, then every entry comes once, newest first, ties of one millisecond included', async () => {
    const activity = createActivityRepository(mongo);
    const at = new Date(Date.now() + 60_000);
    const second = Math.floor(at.getTime() / 1000);
    // Two processes' entries of one millisecond, and one entry a millisecond later.
    await mongo
      .collection('activity')
      .insertOne({ _id: idOfOtherProcess(second), actor: { type: 'user' }, action: 'user.blocked', userId: 'bo', at });
    const own = await activity.append({ actor: { type: 'admin' }, action: 'user.unblocked', userId: 'bo' }, at);
    const later = await activity.append({ actor: { type: 'admin' }, action: 'user.deleted', userId: 'bo' }, new Date(at.getTime() + 1));
    const seen: string[] = [];
    let before: string | undefined;
    do {
      const page = await activity.list({ userId: 'bo', limit: 1, ...(before ? { before } : {}) });
      seen.push(...page.entries.map((entry) => entry.id));
      before = page.next;
    } while (before);
    expect(seen).toEqual([later.id, idOfOtherProcess(second).toHexString(), own.id]);
  });
});
