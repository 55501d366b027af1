import type { Connection } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import type { DeclaredIndex } from '../../core/platform/db/index-drift.js';
import { isMongoError, MONGO_CODES } from '../../core/platform/db/mongo-error-codes.js';
import {
  createDeclaredIndex,
  DuplicateKeysError,
  DuplicateLookupTimeoutError,
  refuseDuplicateKeys,
} from '../../core/platform/db/unique-index-build.js';
import { startFreezableProxy, type FreezableProxy } from '../support/freezable-proxy.js';
import { firstTestMongoHost, testMongoUri, testMongoUriVia } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';

/** What createDeclaredIndex rejected with (it must reject: these collections hold duplicates). */
async function refusal(mongo: Connection, collection: string, index: DeclaredIndex): Promise<unknown> {
  return createDeclaredIndex(mongo, collection, index).then(
    () => {
      throw new Error(`${index.name} was built over duplicates`);
    },
    (err: unknown) => err,
  );
}

const uniqueOn = (key: DeclaredIndex['key']): DeclaredIndex => ({
  name: Object.entries(key)
    .map(([field, direction]) => `${field}_${String(direction)}`)
    .join('_'),
  key,
  options: { unique: true },
});

// Stored documents are whatever a restore or a hand-written fix left: their key values need not
// be the strings the schemas declare.
describe('a unique index refused over stored duplicates', () => {
  let mongo: Connection;
  beforeEach(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('uidx')));
  });
  afterEach(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  // The documents are found by their key with $eq: as a plain filter, a stored { $exists: true }
  // would match every document that has the field, and the operator would be told to delete those.
  // The local MongoDB-wire server evaluates such a stored value as an expression while grouping and
  // fails the look-up there, so on it this test proves that the build error stands; on MongoDB,
  // which groups stored values as they are, it proves the documents named are the right ones.
  test('when the shared key value is a subdocument shaped like a query operator, then the documents named are the ones holding it, never the ones the operator would match, and a look-up that fails leaves the index build error standing', async () => {
    const things = mongo.collection('things');
    const { insertedIds } = await things.insertMany([
      { name: { $exists: true } },
      { name: { $exists: true } },
      { name: 'ann' },
      { name: 'abe' },
    ]);
    const err = await refusal(mongo, 'things', uniqueOn({ name: 1 }));
    if (err instanceof DuplicateKeysError) {
      expect(err.message).toContain(`- name {"$exists":true}: 2 documents: _id ${String(insertedIds[0])}; _id ${String(insertedIds[1])}\n`);
      expect(err.message).not.toContain(String(insertedIds[2]));
      expect(err.message).not.toContain(String(insertedIds[3]));
    } else expect(err).toMatchObject({ code: MONGO_CODES.DuplicateKey });
  });

  // The local MongoDB-wire server cannot group regular expressions ("can't compare"); MongoDB may
  // fail the look-up for its own reasons (a time limit, a primary stepping down). Either way the
  // operator must still learn that the index was refused over duplicates.
  test('when the look-up of the duplicates fails, then the index build error stands, not the look-up error', async () => {
    await mongo.collection('patterns').insertMany([{ pattern: 'ann' }, { pattern: 'ann' }, { pattern: /^a/ }, { pattern: /^b/ }]);
    const err = await refusal(mongo, 'patterns', uniqueOn({ pattern: 1 }));
    expect(err instanceof DuplicateKeysError || isMongoError(err, MONGO_CODES.DuplicateKey)).toBe(true);
  });

  test('when the index has a dotted field and a descending one, then the groups are keyed by both, a document without the dotted field counting as null', async () => {
    const things = mongo.collection('things');
    const { insertedIds } = await things.insertMany([
      { a: { b: 'x' }, c: 1 },
      { a: { b: 'x' }, c: 1 },
      { a: { b: 'x' }, c: 2 },
      { c: 3 },
      { a: { d: 'y' }, c: 3 },
    ]);
    const ids = Object.values(insertedIds).map(String);
    const err = await refusal(mongo, 'things', uniqueOn({ 'a.b': 1, c: -1 }));
    expect(err).toBeInstanceOf(DuplicateKeysError);
    const groups = (err as Error).message.split('\n').filter((line) => line.startsWith('- '));
    expect(groups.sort()).toEqual([
      `- a.b "x", c 1: 2 documents: _id ${ids[0]}; _id ${ids[1]}`,
      `- a.b null, c 3: 2 documents: _id ${ids[3]}; _id ${ids[4]}`,
    ]);
  });

  // socketTimeoutMS=0 is the driver's "no timeout": an operator who sets it has asked for no limit,
  // and the message of a time-out would tell them to raise what they already lifted.
  test('when MONGODB_URI sets socketTimeoutMS=0 (no timeout), then the look-up carries no time limit and names the duplicates', async () => {
    const unbounded = await connectMongo(testMongoUri(uniqueName('uidx'), { socketTimeoutMS: '0', monitorCommands: 'true' }));
    try {
      await unbounded.collection('unbounded').insertMany([{ name: 'ann' }, { name: 'ann' }, { name: 'abe' }]);
      const lookups: Record<string, unknown>[] = [];
      unbounded.getClient().on('commandStarted', (event) => {
        if (event.commandName === 'aggregate') lookups.push(event.command);
      });
      const err = await refusal(unbounded, 'unbounded', uniqueOn({ name: 1 }));
      expect(err).toBeInstanceOf(DuplicateKeysError);
      expect(lookups).toHaveLength(1);
      expect(lookups[0]).not.toHaveProperty('maxTimeMS');
    } finally {
      await unbounded.dropDatabase();
      await unbounded.close();
    }
  });

  // MongoDB stops a look-up at its maxTimeMS (MaxTimeMSExpired); the local MongoDB-wire server does
  // not honour maxTimeMS at all. What both do is let the connection's socket timeout end a command
  // left unanswered, which is what the proxy provokes here: the look-up is frozen once sent. The
  // time limit it carried is read from the command as sent, under the socket timeout so that on
  // MongoDB the server's own answer comes first.
  describe('when listing the duplicates takes longer than the connection allows', () => {
    let proxy: FreezableProxy;
    let viaProxy: Connection;
    let lookups: Record<string, unknown>[];
    beforeEach(async () => {
      await mongo.collection('many').insertMany([{ name: 'ann' }, { name: 'ann' }, { name: 'abe' }]);
      const hello = (await mongo.db?.admin().command({ isMaster: 1 })) as { primary?: unknown } | undefined;
      proxy = await startFreezableProxy(typeof hello?.primary === 'string' ? hello.primary : firstTestMongoHost());
      // One attempt: the driver retries a read that timed out once, on a new connection the frozen proxy would hold too.
      viaProxy = await connectMongo(
        `${testMongoUriVia(proxy.address, mongo.name)}&socketTimeoutMS=1500&retryReads=false&monitorCommands=true`,
      );
      lookups = [];
      viaProxy.getClient().on('commandStarted', (event) => {
        if (event.commandName !== 'aggregate') return;
        lookups.push(event.command);
        proxy.freeze();
      });
    });
    afterEach(async () => {
      await viaProxy.close(true);
      await proxy.close();
    });

    test('after MongoDB refused the build, then the error says the index was refused over duplicates that could not be listed in time and how to go on, and the look-up carried a server time limit under the socket timeout', async () => {
      const err = await refusal(viaProxy, 'many', uniqueOn({ name: 1 }));
      expect(err).toBeInstanceOf(DuplicateLookupTimeoutError);
      expect((err as Error).message).toBe(
        [
          'the unique index name_1 of many on (name) cannot be built: stored documents share a key (duplicate key).',
          'They could not be listed within 0.75 s (a large collection, or MongoDB busy): list them by grouping many on (name) and keeping the groups of more than one document, or give the listing more time with a longer socketTimeoutMS in MONGODB_URI.',
          'Resolve the duplicates (in each group, change or delete every document but one), then run npm run migrate again.',
        ].join('\n'),
      );
      expect(lookups).toEqual([expect.objectContaining({ aggregate: 'many', maxTimeMS: 750 })]);
    });

    test('before a build (a migration rebuilding an index, npm run migrate -- --check), then the error says the index could not be checked in time, not that duplicates exist', async () => {
      const err = await refuseDuplicateKeys(viaProxy, 'many', uniqueOn({ name: 1 })).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(err).toBeInstanceOf(DuplicateLookupTimeoutError);
      expect((err as Error).message).toBe(
        [
          'the unique index name_1 of many on (name) could not be checked for stored documents sharing a key within 0.75 s (a large collection, or MongoDB busy).',
          'Give the check more time with a longer socketTimeoutMS in MONGODB_URI, or check by grouping many on (name) and keeping the groups of more than one document and resolve what it finds; then run npm run migrate again.',
        ].join('\n'),
      );
      expect(lookups).toEqual([expect.objectContaining({ maxTimeMS: 750 })]);
    });
  });
});
