import type { Connection } from 'mongoose';
import { migrateToEnterprises } from '../../core/enterprises/enterprise-migration.js';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { startFreezableProxy, type FreezableProxy } from '../support/freezable-proxy.js';
import { memoryLogger } from '../support/memory-logger.js';
import { firstTestMongoHost, testMongoUri, testMongoUriVia } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';

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
