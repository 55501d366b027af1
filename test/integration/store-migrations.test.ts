import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Connection } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { DECLARED_MODELS } from '../../core/migrations/declared-models.js';
import { checkBeforeMigrating, checkStore } from '../../core/migrations/store-check.js';
import { PRE_ENTERPRISE_INDEXES } from '../../core/enterprises/enterprise-migration.js';
import { migrateStore } from '../../core/migrations/migrate-store.js';
import { createLogger } from '../../core/platform/logger/logger.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { createWebhookEventsRepository } from '../../core/providers/webhook-events.repository.js';
import { countStaleMobileKeys } from '../../core/users/live-mobile-keys.migration.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { startTestService, uniqueName } from '../support/test-service.js';

const run = promisify(execFile);
const MIGRATE = join(projectRoot, 'dist', 'scripts', 'migrate.js');
const DECLARED_WEBHOOK_TTL = 30 * 24 * 3600;

/** The migration command as an operator runs it before starting a new version. */
async function migrate(uri: string, ...args: string[]): Promise<{ code: number; report: Record<string, unknown> }> {
  try {
    const { stdout } = await run(process.execPath, [MIGRATE, ...args], { env: { ...process.env, MONGODB_URI: uri, LOG_LEVEL: 'warn' } });
    return { code: 0, report: JSON.parse(stdout) as Record<string, unknown> };
  } catch (err) {
    const { code, stdout } = err as { code: number; stdout: string };
    return { code, report: JSON.parse(stdout) as Record<string, unknown> };
  }
}

/**
 * A user document written straight to the collection, as a version before stored it (the model
 * would add or refuse fields of this version): the fields every user has, then `fields`.
 */
const storedUser = (userId: string, fields: Record<string, unknown>) => ({
  userId,
  loginId: userId,
  primaryGroup: 'retail',
  secondaryGroups: [],
  firstName: 'F',
  lastName: 'L',
  status: 'ACTIVE',
  sourceType: 'SVC',
  createdAt: new Date(Date.UTC(2025, 0, 1)),
  updatedAt: new Date(Date.UTC(2025, 0, 1)),
  ...fields,
});

const indexesOf = async (mongo: Connection, collection: string) =>
  (await mongo.collection(collection).indexes()).map(({ name, key, unique, expireAfterSeconds }) => ({
    name,
    key,
    unique,
    expireAfterSeconds,
  }));

// Index options change through `npm run migrate`, never at start-up: MongoDB refuses to create an
// index that exists with other options (IndexOptionsConflict), while the local server silently
// keeps both, so start-up compares the declarations with the database instead of re-declaring.
describe('index changes go through the migration command', () => {
  let uri: string;
  let mongo: Connection;
  beforeEach(async () => {
    uri = testMongoUri(uniqueName('migrate'));
    mongo = await connectMongo(uri);
  });
  afterEach(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  test('when a TTL differs from the declaration, then start-up warns with the command, the migration changes it, and a second run changes nothing', async () => {
    // The database as an older version left it: webhook events kept for 7 days, not 30.
    const first = await startTestService('migrate-ttl', { MONGODB_URI: uri });
    await first.close();
    await mongo.collection('webhook_events').dropIndex('receivedAt_1');
    await mongo.collection('webhook_events').createIndex({ receivedAt: 1 }, { expireAfterSeconds: 7 * 24 * 3600 });

    const service = await startTestService('migrate-ttl', { MONGODB_URI: uri });
    try {
      const warning = service.logLines().find((line) => line.level === 40 && String(line.msg).startsWith('MongoDB TTL indexes differ'));
      expect(warning).toMatchObject({
        indexes: ['webhook_events.receivedAt_1: expireAfterSeconds is 604800, declared 2592000'],
        command: 'npm run migrate (node dist/scripts/migrate.js)',
      });
      // The model still works on the old TTL (no IndexOptionsConflict on every call).
      expect(await createWebhookEventsRepository(service.ctx.mongo).markWebhookEventSeen('sendgrid', 'ev-1')).toBe(true);
    } finally {
      await service.close();
    }

    expect(await migrate(uri, '--check')).toMatchObject({ code: 3, report: { migrationNeeded: true, obsolete: [] } });
    // The local server has no collMod: the index is dropped and created again (MongoDB modifies it in place).
    expect(await migrate(uri)).toEqual({
      code: 0,
      report: { dropped: [], modified: [], rebuilt: ['webhook_events.receivedAt_1'], created: [] },
    });
    expect((await indexesOf(mongo, 'webhook_events')).filter((i) => i.name === 'receivedAt_1')).toEqual([
      { name: 'receivedAt_1', key: { receivedAt: 1 }, unique: undefined, expireAfterSeconds: DECLARED_WEBHOOK_TTL },
    ]);
    expect(await migrate(uri)).toEqual({ code: 0, report: { dropped: [], modified: [], rebuilt: [], created: [] } });
    expect(await migrate(uri, '--check')).toEqual({
      code: 0,
      report: { migrationNeeded: false, drifted: [], obsolete: [], staleMobileKeys: 0 },
    });
  });

  test('when an index would accept other writes than declared, then no process starts until the migration has run', async () => {
    // An older version's users index: not unique, so two users could share one id.
    await mongo.collection('users').createIndex({ enterpriseId: 1, userId: 1 });
    // And an index of before enterprises, which a data migration drops.
    await mongo.collection('otp_idempotency_keys').createIndex({ clientId: 1, key: 1 }, { unique: true, name: 'clientId_1_key_1' });

    await expect(startTestService('migrate-unique', { MONGODB_URI: uri })).rejects.toMatchObject({
      name: 'StoreMigrationNeededError',
      message:
        "MongoDB needs a migration before this version can start: run npm run migrate (node dist/scripts/migrate.js) with this version's settings. " +
        'users.enterpriseId_1_userId_1: unique is false, declared true; otp_idempotency_keys.clientId_1_key_1: index of an older version',
    });

    expect(await migrate(uri)).toEqual({
      code: 0,
      report: {
        dropped: ['otp_idempotency_keys.clientId_1_key_1'],
        modified: [],
        rebuilt: ['users.enterpriseId_1_userId_1'],
        // The refused start-up already created what was missing: a new index changes nothing that works.
        created: [],
      },
    });
    expect((await indexesOf(mongo, 'users')).find((i) => i.name === 'enterpriseId_1_userId_1')).toMatchObject({ unique: true });
    expect(await checkStore(mongo)).toEqual({ drifted: [], obsolete: [] });
    const service = await startTestService('migrate-unique', { MONGODB_URI: uri });
    await service.close();
  });
  // An operator reads the report to know what was built: on a fresh database every index is.
  test("when the database is fresh, then the report names every index the migration created, the users' unique keys built by the mobile-number step too", async () => {
    const { code, report } = await migrate(uri);
    expect(code).toBe(0);
    const built: string[] = [];
    for (const { name } of (await mongo.db?.listCollections().toArray()) ?? []) {
      for (const index of await mongo.collection(name).indexes()) if (index.name !== '_id_') built.push(`${name}.${index.name}`);
    }
    expect(built).toContain('users.enterpriseId_1_userId_1');
    expect([...(report.created as string[])].sort()).toEqual(built.sort());
  });

  test('when the check is run on a database whose indexes are missing, then it changes nothing: no index and no collection is created', async () => {
    // A database as an operator may have it before the first start: one collection, no index of ours.
    await mongo.collection('users').insertOne({ _id: 'probe' } as never);

    expect(await migrate(uri, '--check')).toEqual({
      code: 0,
      report: { migrationNeeded: false, drifted: [], obsolete: [], staleMobileKeys: 0 },
    });
    expect(await indexesOf(mongo, 'users')).toEqual([{ name: '_id_', key: { _id: 1 }, unique: undefined, expireAfterSeconds: undefined }]);
    expect((await mongo.db?.listCollections().toArray())?.map((c) => c.name)).toEqual(['users']);
  });

  // An operator runs --check against production before an upgrade: each index list is one
  // listIndexes command per collection, and the comparison, the older versions' indexes and the
  // duplicates to look for are all read from the same lists.
  test("when the check runs, then it reads each collection's index list once, and still finds what a migration would do", async () => {
    const users = mongo.collection('users');
    await users.insertMany([storedUser('ann', {}), storedUser('bob', {})]);
    await users.createIndex({ userId: 1 }, { name: 'userId_1' });
    const monitored = await connectMongo(testMongoUri(mongo.name, { monitorCommands: 'true' }));
    const listed: string[] = [];
    monitored.getClient().on('commandStarted', (event) => {
      if (event.commandName === 'listIndexes') listed.push(String(event.command.listIndexes));
    });
    try {
      const check = await checkBeforeMigrating(monitored);
      expect(check).toMatchObject({ drifted: [], obsolete: ['users.userId_1'], blocked: [] });
    } finally {
      await monitored.close();
    }
    const collections = new Set([
      ...DECLARED_MODELS.map(({ schema }) => schema.get('collection') as string),
      ...PRE_ENTERPRISE_INDEXES.map(([c]) => c),
    ]);
    expect([...listed].sort()).toEqual([...collections].sort());
  });

  test('when an index an older version declared was replaced, then processes start beside it and the migration drops it once', async () => {
    // The activity record's index of before it was ordered by time.
    await mongo.collection('activity').createIndex({ enterpriseId: 1, userId: 1, _id: -1 });
    const service = await startTestService('migrate-superseded', { MONGODB_URI: uri });
    await service.close();

    expect(await migrate(uri)).toEqual({
      code: 0,
      report: { dropped: ['activity.enterpriseId_1_userId_1__id_-1'], modified: [], rebuilt: [], created: [] },
    });
    expect((await indexesOf(mongo, 'activity')).map((i) => i.name)).not.toContain('enterpriseId_1_userId_1__id_-1');
    expect(await migrate(uri)).toEqual({ code: 0, report: { dropped: [], modified: [], rebuilt: [], created: [] } });
  });
  test('when the migration drops an index of before enterprises and rebuilds a TTL index, then the indexes of the same names in other collections stay', async () => {
    const first = await startTestService('migrate-bystanders', { MONGODB_URI: uri });
    await first.close();
    // As an older version left them: the deployment-wide unique userId, webhook events kept 7 days.
    await mongo.collection('users').createIndex({ userId: 1 }, { unique: true });
    await mongo.collection('webhook_events').dropIndex('receivedAt_1');
    await mongo.collection('webhook_events').createIndex({ receivedAt: 1 }, { expireAfterSeconds: 7 * 24 * 3600 });
    // Another collection's indexes that happen to carry the same names.
    await mongo.collection('bystanders').createIndex({ userId: 1 });
    await mongo.collection('bystanders').createIndex({ receivedAt: 1 });

    expect((await migrate(uri)).code).toBe(0);
    expect((await indexesOf(mongo, 'users')).map((i) => i.name)).not.toContain('userId_1');
    expect((await indexesOf(mongo, 'webhook_events')).find((i) => i.name === 'receivedAt_1')).toMatchObject({
      expireAfterSeconds: DECLARED_WEBHOOK_TTL,
    });
    expect((await indexesOf(mongo, 'bystanders')).map((i) => i.name).sort()).toEqual(['_id_', 'receivedAt_1', 'userId_1']);
  });

  test('when the templates still have the unique index on the name alone, then processes start beside it, the migration drops it once, and an enterprise may then have its own template of a shared name', async () => {
    // The index of before templates could belong to an enterprise: one name in the whole deployment.
    await mongo.collection('templates').createIndex({ name: 1 }, { unique: true });
    const service = await startTestService('migrate-templates', { MONGODB_URI: uri });
    await service.close();
    expect((await indexesOf(mongo, 'templates')).find((i) => i.name === 'enterpriseId_1_name_1')).toMatchObject({
      key: { enterpriseId: 1, name: 1 },
      unique: true,
    });

    expect(await migrate(uri)).toEqual({
      code: 0,
      report: { dropped: ['templates.name_1'], modified: [], rebuilt: [], created: [] },
    });
    expect((await indexesOf(mongo, 'templates')).map((i) => i.name)).not.toContain('name_1');
    // Other collections' indexes of that name stay (server_secrets.name_1).
    expect((await indexesOf(mongo, 'server_secrets')).map((i) => i.name)).toContain('name_1');
    expect(await migrate(uri)).toEqual({ code: 0, report: { dropped: [], modified: [], rebuilt: [], created: [] } });

    const again = await startTestService('migrate-templates', { MONGODB_URI: uri });
    try {
      const res = await fetch(`${again.url}/admin/templates`, {
        method: 'POST',
        headers: { authorization: `Bearer ${again.config.adminToken ?? ''}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'otp_sms', channel: 'SMS', text: 'Own: __SVC_OTP__', enterpriseId: 'owner1' }),
      });
      expect(res.status).toBe(201);
    } finally {
      await again.close();
    }
  });
  test('when the groups still have the unique index on the name alone, then the migration makes names unique per owner before dropping it, keeps the groups, and an enterprise may then have its own group of a shared name but no second shared one', async () => {
    // As an older version left it: groups of the deployment, one name in the whole deployment,
    // and no process of this version started yet (the migration creates the new index itself).
    await mongo.collection('groups').createIndex({ name: 1 }, { unique: true });
    await mongo.collection('groups').insertOne({ name: 'retail', description: 'Retail', createdAt: new Date() });

    const first = await migrate(uri);
    expect(first.code).toBe(0);
    expect(first.report).toMatchObject({ dropped: ['groups.name_1'] });
    expect(first.report.created).toContain('groups.enterpriseId_1_name_1');
    const indexes = await indexesOf(mongo, 'groups');
    expect(indexes.map((i) => i.name)).not.toContain('name_1');
    expect(indexes.find((i) => i.name === 'enterpriseId_1_name_1')).toMatchObject({ key: { enterpriseId: 1, name: 1 }, unique: true });
    expect(await migrate(uri)).toEqual({ code: 0, report: { dropped: [], modified: [], rebuilt: [], created: [] } });

    const service = await startTestService('migrate-groups', { MONGODB_URI: uri });
    try {
      const create = (body: Record<string, string>) =>
        fetch(`${service.url}/admin/groups`, {
          method: 'POST',
          headers: { authorization: `Bearer ${service.config.adminToken ?? ''}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await create({ name: 'retail', enterpriseId: 'owner1' })).status).toBe(201);
      const second = await create({ name: 'retail' });
      expect(second.status).toBe(409);
      expect(((await second.json()) as { message: string }).message).toBe('Group retail already exists');
      expect(await mongo.collection('groups').countDocuments({ name: 'retail', enterpriseId: { $exists: false } })).toBe(1);
    } finally {
      await service.close();
    }
  });

  test("when stored users' mobile numbers reach one phone spelt with and without the '+', then the migration keys every live number by its form with the '+', the earlier user keeps a shared phone's key and the later one is reported without it, a second run changes nothing, and --check counts the keys to move before and none after", async () => {
    const users = mongo.collection('users');
    const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute));
    // As a version before wrote them: the key is the number as sent.
    const stored = (enterpriseId: string, userId: string, mobileNumber: string, minute: number, status = 'ACTIVE') =>
      storedUser(userId, {
        enterpriseId,
        mobileNumber,
        status,
        clientId: 'c',
        createdAt: at(minute),
        updatedAt: at(minute),
        ...(status === 'DELETED' ? {} : { liveMobileKey: `${enterpriseId}:${mobileNumber}` }),
      });
    await users.insertMany([
      stored('acme', 'ann', '15550200001', 1),
      stored('acme', 'ben', '+15550200001', 2),
      stored('acme', 'cat', '+15550200002', 3),
      stored('acme', 'dan', '15550200002', 4),
      stored('acme', 'eve', '15550200003', 5),
      stored('acme', 'fay', '15550200003', 6, 'DELETED'),
      stored('other', 'gus', '15550200001', 7),
    ]);
    const keys = async () =>
      Object.fromEntries(
        (await users.find({}, { projection: { _id: 0, userId: 1, enterpriseId: 1, liveMobileKey: 1 } }).toArray()).map((u) => [
          `${String(u.enterpriseId)}/${String(u.userId)}`,
          u.liveMobileKey as unknown,
        ]),
      );
    const withheld = [
      { enterpriseId: 'acme', userId: 'ben', keptBy: 'ann' },
      { enterpriseId: 'acme', userId: 'dan', keptBy: 'cat' },
    ];

    // Before: the check counts the four live users whose key is in the old form (ann, dan, eve, gus).
    expect(await migrate(uri, '--check')).toMatchObject({ code: 3, report: { migrationNeeded: true, staleMobileKeys: 4 } });

    const first = await migrate(uri);
    expect(first.code).toBe(0);
    expect(first.report.withheldMobileKeys).toEqual(withheld);
    // After: nothing left to move; ben and dan, left without a key for the operator to settle, are not counted.
    expect(await migrate(uri, '--check')).toMatchObject({ code: 0, report: { migrationNeeded: false, staleMobileKeys: 0 } });
    const migrated = {
      'acme/ann': 'acme:+15550200001',
      'acme/ben': undefined,
      'acme/cat': 'acme:+15550200002',
      'acme/dan': undefined,
      'acme/eve': 'acme:+15550200003',
      'acme/fay': undefined,
      'other/gus': 'other:+15550200001',
    };
    expect(await keys()).toEqual(migrated);
    // The numbers stay as sent.
    expect(await users.findOne({ userId: 'dan' })).toMatchObject({ mobileNumber: '15550200002' });

    // Still unsettled: reported again, nothing moves.
    const second = await migrate(uri);
    expect(second.report.withheldMobileKeys).toEqual(withheld);
    expect(await keys()).toEqual(migrated);

    // Found by either spelling, within its enterprise only.
    const repo = createUsersRepository(mongo);
    for (const spelling of ['15550200003', '+15550200003']) {
      expect(await repo.findLiveByMobile({ enterpriseId: 'acme' }, spelling)).toMatchObject({ userId: 'eve' });
      expect(await repo.findLiveByMobile({ enterpriseId: 'other' }, spelling)).toBeUndefined();
    }
    for (const spelling of ['15550200001', '+15550200001']) {
      expect(await repo.findLiveByMobile({ enterpriseId: 'acme' }, spelling)).toMatchObject({ userId: 'ann' });
      expect(await repo.findLiveByMobile({ enterpriseId: 'other' }, spelling)).toMatchObject({ userId: 'gus' });
    }

    // Once the earlier users are gone, the next run gives the later ones their keys.
    await repo.markDeleted({ enterpriseId: 'acme', userId: 'ann' }, new Date());
    await repo.markDeleted({ enterpriseId: 'acme', userId: 'cat' }, new Date());
    expect(await migrate(uri)).toEqual({ code: 0, report: { dropped: [], modified: [], rebuilt: [], created: [] } });
    expect(await keys()).toMatchObject({ 'acme/ben': 'acme:+15550200001', 'acme/dan': 'acme:+15550200002' });
  });

  // The mobile-number step read every user on every run, long after every number was keyed.
  test('when the database was migrated, then the next migration and --check read no user: the mobile-number step costs a look-up of its record and one per enterprise', async () => {
    const users = mongo.collection('users');
    await users.insertMany(
      Array.from({ length: 30 }, (_, i) =>
        storedUser(`u${i}`, {
          enterpriseId: 'acme',
          clientId: 'c',
          mobileNumber: `155502100${10 + i}`,
          liveMobileKey: `acme:155502100${10 + i}`,
        }),
      ),
    );
    expect((await migrate(uri)).code).toBe(0);
    const monitored = await connectMongo(testMongoUri(mongo.name, { monitorCommands: 'true' }));
    const usersRead: number[] = [];
    const lookups: string[] = [];
    monitored.getClient().on('commandSucceeded', (event) => {
      const reply = event.reply as { cursor?: { ns?: string; firstBatch?: unknown[]; nextBatch?: unknown[] } };
      if ((event.commandName === 'find' || event.commandName === 'getMore') && reply.cursor?.ns?.endsWith('.users'))
        usersRead.push((reply.cursor.firstBatch ?? reply.cursor.nextBatch ?? []).length);
    });
    monitored.getClient().on('commandStarted', (event) => {
      if (event.commandName === 'find' && event.command.find === 'migrations') lookups.push(JSON.stringify(event.command.filter));
    });
    try {
      expect(await migrateStore(monitored, createLogger({ level: 'silent' }))).toEqual({
        dropped: [],
        modified: [],
        rebuilt: [],
        created: [],
      });
      expect(await countStaleMobileKeys(monitored, createLogger({ level: 'silent' }))).toBe(0);
    } finally {
      await monitored.close();
    }
    expect(usersRead.reduce((a, b) => a + b, 0)).toBe(0);
    expect(lookups).toHaveLength(2);
  });

  test('when users of before enterprises appear after the mobile-number step had run to its end (a rollback to such a version), then the next migration keys their numbers all the same', async () => {
    expect((await migrate(uri)).code).toBe(0);
    await mongo.collection('users').insertOne(storedUser('old-u', { mobileNumber: '15550208888', liveMobileNumber: '15550208888' }));
    expect(await migrate(uri, '--check')).toMatchObject({ report: { staleMobileKeys: 1 } });
    expect((await migrate(uri)).code).toBe(0);
    expect(
      await mongo.collection('users').findOne({ userId: 'old-u' }, { projection: { _id: 0, enterpriseId: 1, liveMobileKey: 1 } }),
    ).toEqual({
      enterpriseId: 'default',
      liveMobileKey: 'default:+15550208888',
    });
  });

  // The step's record said nothing was left, while an API of before the '+' form (a rolling
  // upgrade that went on after the migration, a rollback) kept writing keys in the older form.
  test('when an API of before the keyed form writes a user after the mobile-number step had run to its end, then the next migration keys its number all the same', async () => {
    expect((await migrate(uri)).code).toBe(0);
    await mongo
      .collection('users')
      .insertOne(
        storedUser('late-u', { enterpriseId: 'acme', clientId: 'c', mobileNumber: '15550209999', liveMobileKey: 'acme:15550209999' }),
      );
    expect(await migrate(uri, '--check')).toMatchObject({ report: { staleMobileKeys: 1 } });
    expect((await migrate(uri)).code).toBe(0);
    expect(await mongo.collection('users').findOne({ userId: 'late-u' }, { projection: { _id: 0, liveMobileKey: 1 } })).toEqual({
      liveMobileKey: 'acme:+15550209999',
    });
  });

  const migrateOutput = (uri: string, logLevel = 'warn') =>
    run(process.execPath, [MIGRATE], { env: { ...process.env, MONGODB_URI: uri, LOG_LEVEL: logLevel } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
    );

  test('when the migration stops on an error that quotes a mobile number (a database restored without its indexes, two users holding one phone), then its output names both users, masks the number and the run exits 1', async () => {
    const { insertedIds } = await mongo.collection('users').insertMany([
      storedUser('ann', { enterpriseId: 'default', mobileNumber: '+15550207777', liveMobileKey: 'default:+15550207777' }),
      storedUser('ben', { enterpriseId: 'default', mobileNumber: '+15550207777', liveMobileKey: 'default:+15550207777' }),
      // Without a number, hence outside the sparse index: they share no key.
      storedUser('cy', { enterpriseId: 'default' }),
      storedUser('dee', { enterpriseId: 'default' }),
    ]);
    const failed = await migrateOutput(uri);
    expect(failed.code).toBe(1);
    // The failure is told (which index, which users, what to do), never the number.
    expect(failed.stderr).toContain(
      'the unique index liveMobileKey_1 of users on (liveMobileKey) cannot be built: stored documents share a key (duplicate key).',
    );
    expect(failed.stderr).toContain(
      `- liveMobileKey "default:+*********77": 2 documents: _id ${String(insertedIds[0])} (enterpriseId "default", userId "ann"); _id ${String(insertedIds[1])} (enterpriseId "default", userId "ben")`,
    );
    expect(failed.stderr).toContain('The group of documents sharing a key:');
    expect(failed.stderr).not.toContain('"cy"');
    expect(failed.stderr).toContain('then run npm run migrate again');
    expect(failed.stderr).not.toContain('5550207777');
  });

  test('when an older non-unique users index is to become unique over two users of one id, then the migration exits 1 naming the index, its key fields and both documents, masks the e-mail address they share, tells what to do, and leaves the old index serving', async () => {
    const users = mongo.collection('users');
    // An older version's index: not unique, so one enterprise got two users of one id.
    await users.createIndex({ enterpriseId: 1, userId: 1 });
    const { insertedIds } = await users.insertMany([
      storedUser('ann@example.com', { enterpriseId: 'acme', emailId: 'ann@example.com', mobileNumber: '+15550208881' }),
      storedUser('ann@example.com', { enterpriseId: 'acme', emailId: 'ann@example.com', mobileNumber: '+15550208882' }),
      storedUser('bob', { enterpriseId: 'acme' }),
    ]);
    const [first, second] = [String(insertedIds[0]), String(insertedIds[1])];

    const failed = await migrateOutput(uri);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain(
      'migration failed: the unique index enterpriseId_1_userId_1 of users on (enterpriseId, userId) cannot be built: stored documents share a key (duplicate key).\n' +
        'The group of documents sharing a key:\n' +
        `- enterpriseId "acme", userId "a***@example.com": 2 documents: _id ${first} (enterpriseId "acme", userId "a***@example.com"); _id ${second} (enterpriseId "acme", userId "a***@example.com")\n` +
        'Resolve the duplicates (in each group, change or delete every document but one), then run npm run migrate again.',
    );
    expect(failed.stderr).not.toContain('ann@example.com');
    expect(failed.stderr).not.toContain('555020888');
    // Found before the old index was dropped: it still serves the old version.
    expect((await indexesOf(mongo, 'users')).find((i) => i.name === 'enterpriseId_1_userId_1')).toMatchObject({ unique: undefined });

    // Resolved as told, the next run builds it.
    await users.deleteOne({ _id: insertedIds[1] });
    expect(await migrate(uri)).toMatchObject({ code: 0, report: { rebuilt: ['users.enterpriseId_1_userId_1'] } });
    expect((await indexesOf(mongo, 'users')).find((i) => i.name === 'enterpriseId_1_userId_1')).toMatchObject({ unique: true });
  });

  // The check before the drop reads the collection; a version still running writes meanwhile, and
  // the old index, not unique, lets a second user of one id in between the check and the build.
  test('when a second user of one id is written between the duplicate check and the build of an index turned unique, then the migration is refused and the old index is back', async () => {
    const users = mongo.collection('users');
    await users.createIndex({ enterpriseId: 1, userId: 1 });
    await users.insertOne(storedUser('ann@example.com', { enterpriseId: 'acme' }));
    // A writer of the running version lands right after the old index is dropped: the same
    // connection's real dropIndexes, then a real insert, before the migration builds the new one.
    const db = mongo.db as NonNullable<Connection['db']>;
    const command = db.command.bind(db);
    db.command = (async (cmd: Record<string, unknown>, ...rest: unknown[]) => {
      const answer = await (command as (...args: unknown[]) => Promise<unknown>)(cmd, ...rest);
      if (cmd.dropIndexes === 'users') await users.insertOne(storedUser('ann@example.com', { enterpriseId: 'acme' }));
      return answer;
    }) as typeof db.command;

    await expect(migrateStore(mongo, createLogger({ level: 'silent' }))).rejects.toMatchObject({ name: 'DuplicateKeysError' });
    expect((await indexesOf(mongo, 'users')).find((i) => i.name === 'enterpriseId_1_userId_1')).toMatchObject({
      key: { enterpriseId: 1, userId: 1 },
      unique: undefined,
    });
  });

  test('when stored documents share a key of unique indexes the migration would build (one to become unique, one missing), then --check exits 4 and lists each as the migration would tell it, masked, and builds nothing', async () => {
    const users = mongo.collection('users');
    await users.createIndex({ enterpriseId: 1, userId: 1 });
    const { insertedIds } = await users.insertMany([
      storedUser('ann@example.com', { enterpriseId: 'acme' }),
      storedUser('ann@example.com', { enterpriseId: 'acme' }),
    ]);
    await mongo.collection('templates').insertMany([
      { name: 'otp_sms', channel: 'SMS', text: 'Hi', createdAt: new Date() },
      { name: 'otp_sms', channel: 'SMS', text: 'Hi', createdAt: new Date() },
    ]);
    const indexesBefore = await indexesOf(mongo, 'users');

    const checked = await migrate(uri, '--check');
    expect(checked.code).toBe(4);
    expect(checked.report.migrationNeeded).toBe(true);
    // Users first here, whatever order the models are declared in.
    const blocked = [...(checked.report.blockedByDuplicateKeys as string[])].sort((a, b) =>
      a.includes(' of users ') ? -1 : b.includes(' of users ') ? 1 : 0,
    );
    expect(blocked).toHaveLength(2);
    expect(blocked[0]).toBe(
      'the unique index enterpriseId_1_userId_1 of users on (enterpriseId, userId) cannot be built: stored documents share a key (duplicate key).\n' +
        'The group of documents sharing a key:\n' +
        `- enterpriseId "acme", userId "a***@example.com": 2 documents: _id ${String(insertedIds[0])} (enterpriseId "acme", userId "a***@example.com"); _id ${String(insertedIds[1])} (enterpriseId "acme", userId "a***@example.com")\n` +
        'Resolve the duplicates (in each group, change or delete every document but one), then run npm run migrate again.',
    );
    expect(blocked[1]).toContain('the unique index enterpriseId_1_name_1 of templates on (enterpriseId, name) cannot be built');
    expect(blocked[1]).toContain('- enterpriseId null, name "otp_sms": 2 documents:');
    expect(JSON.stringify(checked.report)).not.toContain('ann@example.com');
    // It only read: the users' index is as it was and the templates got none.
    expect(await indexesOf(mongo, 'users')).toEqual(indexesBefore);
    expect((await indexesOf(mongo, 'templates')).map((i) => i.name)).toEqual(['_id_']);

    // With the duplicates resolved, the check says only that a migration is needed.
    await users.deleteOne({ _id: insertedIds[1] });
    await mongo.collection('templates').deleteOne({ name: 'otp_sms' });
    const after = await migrate(uri, '--check');
    expect(after.code).toBe(3);
    expect(after.report.blockedByDuplicateKeys).toBeUndefined();
  });

  test('when a missing unique index cannot be created over stored duplicates, then the migration names the largest groups first, at most five and five documents each, a missing field as null, and says more are left; a process starting on it stops on the same error', async () => {
    const templates = mongo.collection('templates');
    const template = (name: string, enterpriseId?: string) => ({
      name,
      channel: 'SMS',
      text: 'Hi',
      ...(enterpriseId ? { enterpriseId } : {}),
      createdAt: new Date(),
    });
    // Seven shared templates (no enterpriseId) of one name, and five more pairs of names per owner.
    const { insertedIds } = await templates.insertMany([
      ...Array.from({ length: 7 }, () => template('otp_sms')),
      ...['a', 'b', 'c', 'd', 'e'].flatMap((name) => [template(name, 'acme'), template(name, 'acme')]),
      template('unique_one', 'acme'),
    ]);
    const ids = Object.values(insertedIds).map(String);

    const failed = await migrateOutput(uri);
    expect(failed.code).toBe(1);
    const lines = failed.stderr.split('\n');
    expect(lines[0]).toBe(
      'migration failed: the unique index enterpriseId_1_name_1 of templates on (enterpriseId, name) cannot be built: stored documents share a key (duplicate key).',
    );
    expect(lines[1]).toBe('The first 5 groups of documents sharing a key:');
    const groups = lines.filter((line) => line.startsWith('- '));
    expect(groups).toHaveLength(5);
    expect(groups[0]).toBe(
      `- enterpriseId null, name "otp_sms": 7 documents: ${ids
        .slice(0, 5)
        .map((id) => `_id ${id}`)
        .join('; ')}; and 2 more`,
    );
    for (const group of groups.slice(1))
      expect(group).toMatch(
        /^- enterpriseId "acme", name "[a-e]": 2 documents: _id [0-9a-f]{24} \(enterpriseId "acme"\); _id [0-9a-f]{24} \(enterpriseId "acme"\)$/,
      );
    expect(failed.stderr).not.toContain('unique_one');
    expect(lines).toContain(
      'Resolve the duplicates (in each group, change or delete every document but one), then run npm run migrate again.',
    );
    expect((await indexesOf(mongo, 'templates')).map((i) => i.name)).not.toContain('enterpriseId_1_name_1');
    // A process creating the missing index at start stops on the same error.
    await expect(startTestService('migrate-duplicates', { MONGODB_URI: uri })).rejects.toMatchObject({
      name: 'DuplicateKeysError',
      collection: 'templates',
      index: 'enterpriseId_1_name_1',
      keyFields: ['enterpriseId', 'name'],
      moreGroups: true,
    });
  });

  test("when a user of before enterprises and one enrolled by this version hold one phone (a rolling upgrade), then the migration finishes: the earlier enrolled keeps the phone's key, the other is reported without it, and a second run changes nothing", async () => {
    const users = mongo.collection('users');
    await users.createIndex({ liveMobileKey: 1 }, { unique: true, sparse: true, name: 'liveMobileKey_1' });
    const later = new Date(Date.UTC(2025, 0, 2));
    // The old version's user was enrolled first; a process of this version enrolled the same phone
    // while the old index was already dropped and the old user not yet given its new key.
    await users.insertMany([
      storedUser('old-u', { mobileNumber: '+15550207777', liveMobileNumber: '+15550207777' }),
      storedUser('new-u', {
        enterpriseId: 'default',
        mobileNumber: '+15550207777',
        liveMobileKey: 'default:+15550207777',
        createdAt: later,
      }),
    ]);
    const first = await migrateOutput(uri, 'info');
    expect(first.stderr).not.toContain('5550207777');
    expect(first.code).toBe(0);
    expect((JSON.parse(first.stdout) as Record<string, unknown>).withheldMobileKeys).toEqual([
      { enterpriseId: 'default', userId: 'new-u', keptBy: 'old-u' },
    ]);
    // The old user's key could not be written (the new user held it): counted apart, not as re-keyed.
    const migrated = first.stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === 'migrated data to enterprises');
    expect(migrated).toMatchObject({ rekeyed: 0, leftForSettling: 1 });
    const keys = async () =>
      await users
        .find({}, { projection: { _id: 0, userId: 1, enterpriseId: 1, liveMobileKey: 1, liveMobileNumber: 1 } })
        .sort({ userId: 1 })
        .toArray();
    const settled = [
      { userId: 'new-u', enterpriseId: 'default' },
      { userId: 'old-u', enterpriseId: 'default', liveMobileKey: 'default:+15550207777' },
    ];
    expect(await keys()).toEqual(settled);
    const second = await migrateOutput(uri);
    expect(second.code).toBe(0);
    expect(await keys()).toEqual(settled);
  });
});
