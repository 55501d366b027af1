import type { Connection } from 'mongoose';
import { migrateToEnterprises } from '../../core/enterprises/enterprise-migration.js';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { startFreezableProxy, type FreezableProxy } from '../support/freezable-proxy.js';
import { memoryLogger } from '../support/memory-logger.js';
import { firstTestMongoHost, testMongoUri, testMongoUriVia } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';
import { countStaleMobileKeys, migrateLiveMobileKeys } from '../../core/users/live-mobile-keys.migration.js';
import { createUsersRepository, userModel } from '../../core/users/users.repository.js';

/** The slice of these tests: far smaller than the default, so that a few dozen documents make several. */
const SLICE = 10;
const PER_COLLECTION = 25;
const TENANT_COLLECTIONS = ['clients', 'users', 'otps', 'otp_idempotency_keys', 'deliveries'];
const NUMBER = '+15550100042';

/** How many documents each data command of a connection read or changed (its answer's count). */
function documentsPerCommand(connection: Connection): { command: string; documents: number }[] {
  const seen: { command: string; documents: number }[] = [];
  connection.getClient().on('commandSucceeded', (event) => {
    const reply = event.reply as { n?: number; cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } };
    if (event.commandName === 'update') seen.push({ command: 'update', documents: reply.n ?? 0 });
    if (event.commandName === 'find' || event.commandName === 'getMore')
      seen.push({ command: event.commandName, documents: (reply.cursor?.firstBatch ?? reply.cursor?.nextBatch ?? []).length });
  });
  return seen;
}

/** What a version before enterprises stored: no enterpriseId; users with the number of before (liveMobileNumber). */
async function storeDataOfBeforeEnterprises(mongo: Connection): Promise<void> {
  for (const name of TENANT_COLLECTIONS) {
    await mongo
      .collection(name)
      .insertMany(
        Array.from({ length: PER_COLLECTION }, (_, i) =>
          name === 'users'
            ? { userId: `u${i}`, status: 'ACTIVE', ...(i < 3 ? { mobileNumber: `${NUMBER}${i}`, liveMobileNumber: `${NUMBER}${i}` } : {}) }
            : { name: `${name}-${i}` },
        ),
      );
  }
}

const untagged = async (mongo: Connection) =>
  (await Promise.all(TENANT_COLLECTIONS.map((name) => mongo.collection(name).countDocuments({ enterpriseId: { $exists: false } })))).reduce(
    (a, b) => a + b,
  );

// A production database holds tens of millions of documents: one updateMany over a collection runs
// past the connections' socket timeout (30 s), the driver gives up while MongoDB goes on, and the
// migration fails. The step goes in slices instead; here a slice is 10 documents.
describe('the enterprise step of the migration on large collections', () => {
  let mongo: Connection;
  beforeEach(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('bigmigrate')));
    await storeDataOfBeforeEnterprises(mongo);
  });
  afterEach(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  test('when collections hold more documents than a slice, then no command reads or changes more than a slice, every document moves to the default enterprise, and progress is logged with counts only', async () => {
    const monitored = await connectMongo(testMongoUri(mongo.name, { monitorCommands: 'true' }));
    const { logger, lines } = memoryLogger();
    try {
      const commands = documentsPerCommand(monitored);
      await migrateToEnterprises(monitored, logger, { sliceSize: SLICE, progressEverySlices: 2 });
      expect(commands.filter(({ documents }) => documents > SLICE)).toEqual([]);
      // It did write through those commands.
      expect(commands.filter(({ command }) => command === 'update').length).toBeGreaterThanOrEqual(TENANT_COLLECTIONS.length * 3);
    } finally {
      await monitored.close();
    }
    expect(await untagged(mongo)).toBe(0);
    expect(
      await mongo
        .collection('users')
        .findOne({ userId: 'u1' }, { projection: { _id: 0, enterpriseId: 1, liveMobileKey: 1, liveMobileNumber: 1 } }),
    ).toEqual({ enterpriseId: 'default', liveMobileKey: `default:${NUMBER}1` });
    const progress = lines().filter((line) => line.msg === 'data migration in progress');
    expect(progress.map(({ step, collection, read, changed }) => ({ step, collection, read, changed }))).toEqual(
      TENANT_COLLECTIONS.map((collection) => ({ step: 'enterprises', collection, read: 2 * SLICE, changed: 2 * SLICE })),
    );
    // Counts and names only: nothing stored is quoted.
    const logged = new Set(progress.flatMap((line) => Object.keys(line)));
    ['level', 'time', 'pid', 'hostname'].forEach((field) => logged.delete(field));
    expect([...logged].sort()).toEqual(['changed', 'collection', 'msg', 'read', 'step']);
  });

  // migrate runs before every deployment: once the data is migrated, a run must not read tens of
  // millions of documents again to find nothing to do.
  test('when every document already has its enterprise (a migrated database), then the next run reads no collection whole: nothing but the look-ups that find nothing left', async () => {
    await migrateToEnterprises(mongo, memoryLogger().logger, { sliceSize: SLICE });
    const monitored = await connectMongo(testMongoUri(mongo.name, { monitorCommands: 'true' }));
    try {
      const commands = documentsPerCommand(monitored);
      await migrateToEnterprises(monitored, memoryLogger().logger, { sliceSize: SLICE });
      expect(commands.filter(({ command }) => command === 'update')).toEqual([]);
      expect(commands.reduce((sum, { documents }) => sum + documents, 0)).toBe(0);
    } finally {
      await monitored.close();
    }
  });

  test('when a run is cut off half-way (the answer to a slice lost past the socket timeout), then the next run finishes the job, changing only what was left', async () => {
    const hello = (await mongo.db?.admin().command({ isMaster: 1 })) as { primary?: unknown } | undefined;
    const proxy: FreezableProxy = await startFreezableProxy(typeof hello?.primary === 'string' ? hello.primary : firstTestMongoHost());
    // A user of this version, in its enterprise: no run changes it.
    await mongo.collection('users').insertOne({ userId: 'acme-user', status: 'ACTIVE', enterpriseId: 'acme' });
    const viaProxy = await connectMongo(`${testMongoUriVia(proxy.address, mongo.name)}&socketTimeoutMS=1000&monitorCommands=true`);
    let updates = 0;
    viaProxy.getClient().on('commandStarted', (event) => {
      // The second slice's answer never comes back in time: MongoDB changed it, the run stops.
      if (event.commandName === 'update' && ++updates === 2) proxy.holdNextAnswerTo('update');
    });
    try {
      const failed = await migrateToEnterprises(viaProxy, memoryLogger().logger, { sliceSize: SLICE }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(failed?.name).toBe('MongoNetworkTimeoutError');
    } finally {
      proxy.release();
      await viaProxy.close(true);
      await proxy.close();
    }
    expect(await untagged(mongo)).toBe(TENANT_COLLECTIONS.length * PER_COLLECTION - 2 * SLICE);

    const { logger, lines } = memoryLogger();
    await migrateToEnterprises(mongo, logger, { sliceSize: SLICE });
    expect(await untagged(mongo)).toBe(0);
    expect(lines().find((line) => line.msg === 'migrated data to enterprises')).toMatchObject({
      tagged: TENANT_COLLECTIONS.length * PER_COLLECTION - 2 * SLICE,
      rekeyed: 3,
    });
    expect(await mongo.collection('users').findOne({ userId: 'acme-user' }, { projection: { _id: 0, enterpriseId: 1 } })).toEqual({
      enterpriseId: 'acme',
    });
  });
});

// The mobile-number step reads every live user with a number. It sorted them by enrollment with no
// index of that order: MongoDB sorted the whole collection before answering the first batch
// (minutes on tens of millions, past the socket timeout), then answered batches of up to 16 MB,
// each followed by a write per user before the next getMore (long enough, on a remote MongoDB, for
// the cursor to pass MongoDB's 10-minute idle timeout).
describe('the mobile-number step of the migration on large collections', () => {
  let mongo: Connection;
  beforeEach(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('bigkeys')));
  });
  afterEach(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  test("when users outnumber a slice, then each read of the migration and of --check carries at most a slice, the migration's in the order of an index, and every number is keyed, the earlier of two users of one phone keeping it", async () => {
    const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute));
    // Stored by a version before: the key is the number as sent. Inserted newest first, so that
    // the order of storage is not that of enrollment.
    await mongo.collection('users').insertMany(
      Array.from({ length: PER_COLLECTION }, (_, i) => PER_COLLECTION - 1 - i).map((i) => ({
        enterpriseId: 'acme',
        userId: `u${String(i).padStart(2, '0')}`,
        status: 'ACTIVE',
        createdAt: at(i),
        // u00 and u20 reach one phone, with and without the '+'.
        mobileNumber: i === 20 ? '15550300000' : `+155503000${String(i).padStart(2, '0')}`,
        ...(i === 20 ? { liveMobileKey: 'acme:15550300000' } : { liveMobileKey: `acme:+155503000${String(i).padStart(2, '0')}` }),
      })),
    );
    await userModel(mongo);
    const monitored = await connectMongo(testMongoUri(mongo.name, { monitorCommands: 'true' }));
    const sorts: Record<string, unknown>[] = [];
    const hints: unknown[] = [];
    monitored.getClient().on('commandStarted', (event) => {
      // The driver sends a sort as a Map (its keys' order).
      const sort = event.command.sort as Map<string, unknown> | Record<string, unknown> | undefined;
      const keys = sort instanceof Map ? Object.fromEntries(sort) : (sort ?? {});
      if (event.commandName === 'find' && event.command.find === 'users' && Object.keys(keys).length > 0) {
        sorts.push(keys);
        hints.push(event.command.hint);
      }
    });
    const { logger } = memoryLogger();
    let withheld: unknown;
    try {
      const commands = documentsPerCommand(monitored);
      // --check counts the one key in the form of before (u20's), as the migration reads.
      expect(await countStaleMobileKeys(monitored, logger, { sliceSize: SLICE })).toBe(1);
      withheld = await migrateLiveMobileKeys(monitored, logger, { sliceSize: SLICE });
      expect(await countStaleMobileKeys(monitored, logger, { sliceSize: SLICE })).toBe(0);
      expect(commands.filter(({ documents }) => documents > SLICE)).toEqual([]);
    } finally {
      await monitored.close();
    }
    expect(withheld).toEqual([{ enterpriseId: 'acme', userId: 'u20', keptBy: 'u00' }]);
    // MongoDB reads them in the order of an index: nothing to sort before the first answer.
    const indexKeys = (await mongo.collection('users').indexes()).map((index) => JSON.stringify(index.key));
    expect(sorts.length).toBeGreaterThan(0);
    for (const sort of sorts) expect(indexKeys).toContain(JSON.stringify(sort));
    // The migration names that index (hint) rather than trust MongoDB's planner to choose it: the
    // (enterpriseId, userId) index serves the same enterprise-first reads, and a plan that picked
    // it would sort every user in memory again. The local server ignores a hint and reads in order.
    expect(hints).toContainEqual({ enterpriseId: 1, createdAt: 1, userId: 1 });
    for (const [i, sort] of sorts.entries()) if (hints[i] !== undefined) expect(hints[i]).toEqual(sort);
    expect(await mongo.collection('users').countDocuments({ liveMobileKey: { $regex: '^acme:\\+' } })).toBe(PER_COLLECTION - 1);
  });
});

/** The data commands a connection sends (`name collection`): what a run costs MongoDB. */
function commandsSent(connection: Connection): string[] {
  const sent: string[] = [];
  connection.getClient().on('commandStarted', (event) => {
    if (
      ['find', 'getMore', 'aggregate', 'count', 'distinct', 'update', 'insert', 'delete', 'listIndexes', 'createIndexes'].includes(
        event.commandName,
      )
    )
      sent.push(`${event.commandName} ${String(event.command[event.commandName === 'getMore' ? 'collection' : event.commandName])}`);
  });
  return sent;
}

/** Users as a version before stored them (the key is the number as sent), more than a slice of them. */
async function storeUsersOfBefore(mongo: Connection): Promise<void> {
  await mongo.collection('users').insertMany(
    Array.from({ length: PER_COLLECTION }, (_, i) => ({
      enterpriseId: 'acme',
      userId: `u${String(i).padStart(2, '0')}`,
      status: 'ACTIVE',
      createdAt: new Date(Date.UTC(2025, 0, 1, 0, i)),
      mobileNumber: `155504000${String(i).padStart(2, '0')}`,
      liveMobileKey: `acme:155504000${String(i).padStart(2, '0')}`,
    })),
  );
}

const oldFormKeys = async (mongo: Connection) => mongo.collection('users').countDocuments({ liveMobileKey: { $regex: '^acme:[0-9]' } });

// Once every number is keyed, nothing is left for the step until a version of it changes the form
// again: this version's API writes every key it stores in the keyed form. No index says which keys
// are in which form, so the step records that it ran to its end instead of reading every user
// again on every run (tens of millions of documents, each a look-up on --check).
describe('the mobile-number step of the migration once it has run to its end', () => {
  let mongo: Connection;
  beforeEach(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('keysdone')));
    await storeUsersOfBefore(mongo);
  });
  afterEach(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  test('when it ran to its end once, then the next run and --check cost a look-up of the record and one per enterprise and read no user, and users this version writes afterwards are keyed as the step would', async () => {
    await migrateLiveMobileKeys(mongo, memoryLogger().logger, { sliceSize: SLICE });
    expect(await oldFormKeys(mongo)).toBe(0);
    const monitored = await connectMongo(testMongoUri(mongo.name, { monitorCommands: 'true' }));
    try {
      const sent = commandsSent(monitored);
      expect(await migrateLiveMobileKeys(monitored, memoryLogger().logger, { sliceSize: SLICE })).toEqual([]);
      // The record, then the enterprises and, for the one there is, whether an API of before the '+'
      // form wrote a key since (a look-up of the live-mobile index that finds none).
      expect(sent).toEqual(['find migrations', 'distinct users', 'find users']);
      sent.length = 0;
      expect(await countStaleMobileKeys(monitored, memoryLogger().logger, { sliceSize: SLICE })).toBe(0);
      // --check also asks whether users of before enterprises came back (which the migration would
      // key again): one look-up through the users' enterpriseId-first index, which finds none.
      expect(sent).toEqual(['find migrations', 'find users', 'distinct users', 'find users']);
    } finally {
      await monitored.close();
    }

    // This version's API keys what it writes (enrollment, a changed number), '+' typed or not: the
    // record stays true. Without the record, a count that reads every user finds nothing to move.
    const repo = createUsersRepository(mongo);
    const now = new Date();
    await repo.insert({
      enterpriseId: 'acme',
      userId: 'later',
      loginId: 'later',
      primaryGroup: 'retail',
      secondaryGroups: [],
      firstName: 'F',
      lastName: 'L',
      mobileNumber: '15550409999',
      status: 'ACTIVE',
      sourceType: 'SVC',
      clientId: 'c',
      createdAt: now,
      updatedAt: now,
    });
    const changed = await mongo.collection('users').findOne<{ updatedAt: Date }>({ userId: 'u03' });
    expect(await repo.applyChanges({ enterpriseId: 'acme', userId: 'u03' }, changed!.updatedAt, { mobileNumber: '15550408888' }, now)).toBe(
      true,
    );
    expect(
      await mongo
        .collection('users')
        .find({ userId: { $in: ['later', 'u03'] } }, { projection: { _id: 0, liveMobileKey: 1 } })
        .sort({ userId: 1 })
        .toArray(),
    ).toEqual([{ liveMobileKey: 'acme:+15550409999' }, { liveMobileKey: 'acme:+15550408888' }]);
    await mongo.collection('migrations').deleteMany({});
    expect(await countStaleMobileKeys(mongo, memoryLogger().logger, { sliceSize: SLICE })).toBe(0);
  });

  test('when a run is cut off half-way, then it leaves no record: the next run reads every user and keys what was left', async () => {
    const hello = (await mongo.db?.admin().command({ isMaster: 1 })) as { primary?: unknown } | undefined;
    const proxy: FreezableProxy = await startFreezableProxy(typeof hello?.primary === 'string' ? hello.primary : firstTestMongoHost());
    await userModel(mongo);
    const viaProxy = await connectMongo(`${testMongoUriVia(proxy.address, mongo.name)}&socketTimeoutMS=1000&monitorCommands=true`);
    let updates = 0;
    viaProxy.getClient().on('commandStarted', (event) => {
      // The answer to the second slice's first write never comes back in time: the run stops with
      // the first slice keyed (one write per user).
      if (event.commandName === 'update' && ++updates === SLICE + 1) proxy.holdNextAnswerTo('update');
    });
    try {
      const failed = await migrateLiveMobileKeys(viaProxy, memoryLogger().logger, { sliceSize: SLICE }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(failed?.name).toBe('MongoNetworkTimeoutError');
    } finally {
      proxy.release();
      await viaProxy.close(true);
      await proxy.close();
    }
    // MongoDB applied the held write: the second slice's first user is keyed too.
    expect(await oldFormKeys(mongo)).toBe(PER_COLLECTION - SLICE - 1);
    expect(await mongo.collection('migrations').countDocuments()).toBe(0);

    const monitored = await connectMongo(testMongoUri(mongo.name, { monitorCommands: 'true' }));
    try {
      const read = documentsPerCommand(monitored);
      await migrateLiveMobileKeys(monitored, memoryLogger().logger, { sliceSize: SLICE });
      const usersRead = read.filter(({ command }) => command !== 'update').reduce((sum, { documents }) => sum + documents, 0);
      expect(usersRead).toBeGreaterThanOrEqual(PER_COLLECTION);
    } finally {
      await monitored.close();
    }
    expect(await oldFormKeys(mongo)).toBe(0);
    expect(await mongo.collection('migrations').findOne({}, { projection: { completedAt: 0 } })).toEqual({
      _id: 'mobile number keys',
      version: 1,
    });
  });

  test('when the record was written by another version of the step, then the run reads every user again and records this version', async () => {
    await migrateLiveMobileKeys(mongo, memoryLogger().logger, { sliceSize: SLICE });
    // A version of the step that keyed another form (or a rollback to one) left its own record.
    await mongo
      .collection<{ _id: string }>('migrations')
      .updateOne({ _id: 'mobile number keys' }, { $set: { version: 0 } }, { upsert: true });
    await mongo.collection('users').updateOne({ userId: 'u07' }, { $set: { liveMobileKey: 'acme:15550400007' } });
    expect(await countStaleMobileKeys(mongo, memoryLogger().logger, { sliceSize: SLICE })).toBe(1);
    await migrateLiveMobileKeys(mongo, memoryLogger().logger, { sliceSize: SLICE });
    expect(await oldFormKeys(mongo)).toBe(0);
    expect(await mongo.collection('migrations').findOne({}, { projection: { completedAt: 0 } })).toEqual({
      _id: 'mobile number keys',
      version: 1,
    });
  });

  test('when a run leaves users without their key (an earlier user holds the phone), then it writes no record: the next run settles them once the phone is free', async () => {
    await mongo.collection('users').insertOne({
      enterpriseId: 'acme',
      userId: 'twin',
      status: 'ACTIVE',
      createdAt: new Date(Date.UTC(2025, 0, 2)),
      mobileNumber: '+15550400001',
      liveMobileKey: 'acme:+15550400001',
    });
    expect(await migrateLiveMobileKeys(mongo, memoryLogger().logger, { sliceSize: SLICE })).toEqual([
      { enterpriseId: 'acme', userId: 'twin', keptBy: 'u01' },
    ]);
    expect(await mongo.collection('migrations').countDocuments()).toBe(0);
    await createUsersRepository(mongo).markDeleted({ enterpriseId: 'acme', userId: 'u01' }, new Date());
    expect(await migrateLiveMobileKeys(mongo, memoryLogger().logger, { sliceSize: SLICE })).toEqual([]);
    expect(await mongo.collection('users').findOne({ userId: 'twin' }, { projection: { _id: 0, liveMobileKey: 1 } })).toEqual({
      liveMobileKey: 'acme:+15550400001',
    });
    expect(await mongo.collection('migrations').countDocuments()).toBe(1);
  });
});
