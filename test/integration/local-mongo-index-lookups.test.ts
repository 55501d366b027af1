import { MongoClient, type Collection, type Sort } from 'mongodb';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';

/**
 * The local MongoDB-wire server answers a filter that names every key of a unique index (plain
 * values or `$in` lists), with or without other conditions, through that index (as mongod does)
 * instead of scanning. These tests hold that the answers are the ones the filter means: every
 * stored document that matches, nothing else, whatever path found them.
 */
describe('local MongoDB-wire server: $in look-ups through a unique index', () => {
  let client: MongoClient;
  let users: Collection<{ enterpriseId: string; userId: unknown; n: number; tag?: string }>;
  beforeAll(async () => {
    client = await MongoClient.connect(testMongoUri(uniqueName('inlookups')));
    users = client.db().collection('users');
    await users.createIndex({ enterpriseId: 1, userId: 1 }, { unique: true });
    await users.insertMany([
      { enterpriseId: 'e1', userId: 'a', n: 1, tag: 'x' },
      { enterpriseId: 'e1', userId: 'b', n: 2 },
      { enterpriseId: 'e2', userId: 'a', n: 3, tag: 'x' },
      { enterpriseId: 'e2', userId: 'c', n: 4 },
      { enterpriseId: 'e3', userId: 7, n: 5 },
      { enterpriseId: 'e3', userId: '7', n: 6 },
    ]);
  });
  afterAll(async () => {
    await client.db().dropDatabase();
    await client.close();
  });

  const ns = async (filter: object, options: { sort?: Sort; limit?: number } = {}) =>
    (await users.find(filter, { ...options, projection: { _id: 0, n: 1 } }).toArray()).map((d) => d.n);

  test('when both keys are $in lists, then every stored pair of the two sets is found and no other', async () => {
    const found = await ns({ enterpriseId: { $in: ['e1', 'e2'] }, userId: { $in: ['a', 'c', 'zz'] } });
    expect(found.sort()).toEqual([1, 3, 4]);
  });

  test('when one key is a plain value and the other a list, then only that key value matches', async () => {
    expect((await ns({ enterpriseId: 'e1', userId: { $in: ['a', 'b', 'c'] } })).sort()).toEqual([1, 2]);
  });

  test('when a list holds a number and a string of the same digits, then each matches only its own type', async () => {
    expect(await ns({ enterpriseId: 'e3', userId: { $in: [7] } })).toEqual([5]);
    expect(await ns({ enterpriseId: 'e3', userId: { $in: ['7'] } })).toEqual([6]);
  });

  test('when a sort and a limit are given, then they apply to what the lists match', async () => {
    expect(await ns({ enterpriseId: { $in: ['e1', 'e2'] }, userId: { $in: ['a', 'b', 'c'] } }, { sort: { n: -1 }, limit: 2 })).toEqual([
      4, 3,
    ]);
  });

  test('when the filter has a field beside the index keys, then it still narrows the answer', async () => {
    expect((await ns({ enterpriseId: { $in: ['e1', 'e2'] }, userId: { $in: ['a', 'b'] }, tag: 'x' })).sort()).toEqual([1, 3]);
  });

  test('when the keys are plain values beside other conditions (a conditional update), then only a document meeting them all is found and changed', async () => {
    expect(await ns({ enterpriseId: 'e1', userId: 'a', tag: 'x' })).toEqual([1]);
    expect(await ns({ enterpriseId: 'e1', userId: 'a', tag: 'y' })).toEqual([]);
    expect(await ns({ enterpriseId: 'e1', userId: 'b', tag: { $exists: false } })).toEqual([2]);
    expect(await ns({ enterpriseId: 'e1', userId: 'a', $or: [{ tag: 'nope' }, { n: 1 }] })).toEqual([1]);
    expect(await ns({ enterpriseId: 'e3', userId: 7, n: { $gt: 0 } })).toEqual([5]);
    expect((await users.updateOne({ enterpriseId: 'e1', userId: 'b', n: 99 }, { $set: { tag: 'changed' } })).matchedCount).toBe(0);
    expect((await users.updateOne({ enterpriseId: 'e1', userId: 'b', n: 2 }, { $set: { tag: 'changed' } })).modifiedCount).toBe(1);
    expect(await ns({ enterpriseId: 'e1', userId: 'b', tag: 'changed' })).toEqual([2]);
  });

  test('when a sparse unique key is named beside another condition, then documents without the key are never found', async () => {
    const keyed = client.db().collection<{ key?: string; n: number }>('keyed');
    await keyed.createIndex({ key: 1 }, { unique: true, sparse: true });
    await keyed.insertMany([{ key: 'k1', n: 1 }, { n: 2 }, { n: 3 }]);
    const found = async (filter: object) => (await keyed.find(filter, { projection: { _id: 0, n: 1 } }).toArray()).map((d) => d.n);
    expect(await found({ key: 'k1', n: { $lt: 5 } })).toEqual([1]);
    expect(await found({ key: 'k2', n: { $lt: 5 } })).toEqual([]);
    expect(await found({ key: { $in: ['k1', 'k2'] }, n: 1 })).toEqual([1]);
  });

  test('when a list is empty, then nothing matches', async () => {
    expect(await ns({ enterpriseId: { $in: [] }, userId: { $in: ['a'] } })).toEqual([]);
  });

  test('when a document changes its key, then the look-up finds it under the new key only', async () => {
    await users.updateOne({ enterpriseId: 'e2', userId: 'c' }, { $set: { userId: 'd' } });
    expect(await ns({ enterpriseId: { $in: ['e2'] }, userId: { $in: ['c'] } })).toEqual([]);
    expect(await ns({ enterpriseId: { $in: ['e2'] }, userId: { $in: ['d'] } })).toEqual([4]);
  });
});
