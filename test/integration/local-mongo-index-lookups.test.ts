import { MongoClient, type Collection, type Sort } from 'mongodb';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';

/**
 * The local MongoDB-wire server answers `$in` lists on exactly a unique index's keys through that
 * index (as mongod does) instead of scanning. These tests hold that the answers are the ones the
 * filter means: every stored document that matches, nothing else, whatever path found them.
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

  test('when a list is empty, then nothing matches', async () => {
    expect(await ns({ enterpriseId: { $in: [] }, userId: { $in: ['a'] } })).toEqual([]);
  });

  test('when a document changes its key, then the look-up finds it under the new key only', async () => {
    await users.updateOne({ enterpriseId: 'e2', userId: 'c' }, { $set: { userId: 'd' } });
    expect(await ns({ enterpriseId: { $in: ['e2'] }, userId: { $in: ['c'] } })).toEqual([]);
    expect(await ns({ enterpriseId: { $in: ['e2'] }, userId: { $in: ['d'] } })).toEqual([4]);
  });
});
