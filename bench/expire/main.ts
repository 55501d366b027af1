// bench/expire: the notification worker (its real entry point) expiring N preloaded pending
// notifications that fall due at one instant, against one bare `updateMany` doing the same state
// change on the same server in the same run; meanwhile an answer stream (the service's own
// answer path) tries every due notification and must never be accepted. Then the lag between
// expiresAt and EXPIRED at a steady 1,000 expiries per second through the delayed jobs.
//
// Preloaded records have no expiry jobs (as after a Redis loss): the sweep is what expires them.
// Knobs: N (1,000,000), RATE (1000 per second), RATE_SECONDS (10), SWEEP_MS (1000), and
// RATE_SWEEP_MS (SWEEP_MS): the sweep interval of the worker restarted for the rate phase.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { AppError } from '../../core/platform/errors/app-error.js';
import { createLogger } from '../../core/platform/logger/logger.js';
import type { Notification } from '../../core/notifications/notification.types.js';
import { createNotificationsRepository, notificationModel, toNotificationDoc } from '../../core/notifications/notifications.repository.js';
import { createNotificationsService } from '../../core/notifications/notifications.service.js';
import { enqueueExpiry } from '../../core/platform/queues/notification.queue.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { benchUserId, connectMongo, insertBenchUsers, projectEnv, storesOf } from '../support/arms.js';
import {
  distDir,
  envInt,
  envString,
  machineInfo,
  percentile,
  printTable,
  round,
  runBenchmark,
  sleep,
  startInfra,
  startNode,
  wallMs,
  writeResult,
} from '../support/bench-kit.js';

const N = envInt('N', 1_000_000);
const RATE = envInt('RATE', 1000);
const RATE_SECONDS = envInt('RATE_SECONDS', 10);
const SWEEP_MS = envInt('SWEEP_MS', 500);
const RATE_SWEEP_MS = envInt('RATE_SWEEP_MS', SWEEP_MS);
const USERS = 100;
const GOAL = 1.5;
// The in-memory MongoDB-wire server keeps every document on the JVM heap (about 5 KB each), and
// an updateMany holds a second copy of every document it changes: a million pending
// notifications need far more than the JVM's default ceiling. A small young generation leaves
// the rest to the old one.
const MONGO_JVM_OPTIONS = envString('MONGO_JVM_OPTIONS', '-Xmx20g -Xmn1g').split(' ').filter(Boolean);
// One updateMany over a million documents takes about 40 s on the MongoDB-wire test server, and
// holds up its other connections meanwhile: past the driver's 30 s socket and monitor timeouts.
// Both arms get the same allowance.
const LONG_COMMANDS = '?socketTimeoutMS=600000&connectTimeoutMS=600000';

function pendingDoc(i: number, expiresAt: Date, createdAt: Date): Notification {
  return {
    notificationUuid: randomUUID(),
    enterpriseId: 'default',
    clientId: 'bench',
    userId: benchUserId(i % USERS),
    body: [{ lng: 'English', subject: 'Login request', message: `Approve login ${i}?` }],
    actions: [
      { label: 'Approve', action: 'accept', authlevel: 1 },
      { label: 'Reject', action: 'reject', authlevel: 1 },
    ],
    dsRequired: false,
    numberAttempts: 0,
    status: 'ACTIVE',
    signingStatus: 'NA',
    isDsVerified: false,
    createdAt,
    expiresAt,
  };
}

/** Inserts n pending notifications due at `expiresAt`; returns a sample of them (uuid, user). */
async function preload(mongo: Connection, n: number, expiresAt: Date): Promise<{ uuid: string; userId: string }[]> {
  const Notifications = await notificationModel(mongo);
  const createdAt = new Date();
  const sample: { uuid: string; userId: string }[] = [];
  const batch = 5000;
  for (let from = 0; from < n; from += batch) {
    const docs = Array.from({ length: Math.min(batch, n - from) }, (_, k) => pendingDoc(from + k, expiresAt, createdAt));
    if (sample.length < 5000) sample.push(...docs.slice(0, 50).map((d) => ({ uuid: d.notificationUuid, userId: d.userId })));
    await Notifications.collection.insertMany(docs.map(toNotificationDoc) as never[], { ordered: false });
    // Large preloads take minutes on the MongoDB-wire test server: show that they progress.
    if ((from + batch) % 100_000 === 0) console.log(`preload: ${from + batch} of ${n}`);
  }
  return sample;
}

await runBenchmark('expire', async (cleanup) => {
  const started = new Date();
  const infra = await startInfra({ jvmOptions: MONGO_JVM_OPTIONS });
  cleanup(infra.stop);
  const stores = storesOf(infra);
  const workerEnv = projectEnv(stores, 'bench_expire_worker', 'bex');
  const env: Record<string, string> = {
    ...workerEnv,
    MONGODB_URI: `${workerEnv.MONGODB_URI}${LONG_COMMANDS}`,
    NOTIFICATION_SWEEP_INTERVAL_MS: String(SWEEP_MS),
    PUBLIC_URL: 'http://127.0.0.1:9',
  };
  const logger = createLogger({ level: 'warn' });

  // Bare arm: same documents and indexes in another database of the same server, one updateMany.
  const bareMongo = await connectMongo(`${infra.mongo.url}/bench_expire_bare${LONG_COMMANDS}`);
  cleanup(() => bareMongo.close());
  const t0 = wallMs();
  await preload(bareMongo, N, new Date(Date.now() - 1000));
  const bareLoadS = (wallMs() - t0) / 1000;
  const bareStart = wallMs();
  const bare = await (
    await notificationModel(bareMongo)
  ).updateMany({ status: 'ACTIVE', expiresAt: { $lte: new Date() } }, { $set: { status: 'EXPIRED', answeredAt: new Date() } });
  const bareMs = wallMs() - bareStart;
  if (bare.modifiedCount !== N) throw new Error(`bare updateMany changed ${bare.modifiedCount} of ${N}`);
  await bareMongo.dropDatabase();
  console.log(`bare: preload ${round(bareLoadS, 1)} s, updateMany ${round(bareMs)} ms`);

  // Worker arm: preloaded to fall due a little after the worker is running.
  const mongo = await connectMongo(env.MONGODB_URI);
  cleanup(() => mongo.close());
  await insertBenchUsers(mongo, USERS);
  const dueAt = new Date(Date.now() + 3_600_000);
  const sample = await preload(mongo, N, dueAt);
  const worker = await startNode('notification worker', join(distDir, 'workers', 'notifications', 'main.js'), env, {
    ready: /notification-callback worker running/,
  });
  cleanup(worker.stop);
  // Move the whole set's due time to just ahead (one write, before the clock starts). That write
  // is itself an updateMany over N documents: the due time leaves it twice the bare arm's time,
  // and the run is void if it had not finished by then.
  const due = new Date(Date.now() + 5000 + 2 * bareMs);
  await (await notificationModel(mongo)).updateMany({ status: 'ACTIVE' }, { $set: { expiresAt: due } });
  if (Date.now() > due.getTime() - 1000) throw new Error('moving the due time took longer than planned; the clock would include it');

  const redis = new Redis(infra.redis.url, { maxRetriesPerRequest: null });
  cleanup(async () => redis.disconnect());
  const queue = new Queue('notification', { connection: redis, prefix: 'bex' });
  cleanup(() => queue.close());
  const service = createNotificationsService({
    repository: createNotificationsRepository(mongo),
    users: createUsersRepository(mongo),
    enqueueExpiry: (uuid, at) => enqueueExpiry(queue, uuid, at),
    enqueueCallback: async () => undefined,
    logger,
    callbackPolicy: { allowLoopback: false, allowedNetworks: [] },
  });

  // The answer stream: from the due instant on, keep answering sampled notifications.
  let stop = false;
  let answers = 0;
  let lateAccepted = 0;
  const refusals: Record<string, number> = {};
  let next = 0;
  const streamLoop = async () => {
    while (Date.now() < due.getTime()) await sleep(1);
    while (!stop) {
      const { uuid, userId } = sample[next++ % sample.length];
      try {
        await service.answer('default', userId, uuid, { response: 'accept' });
        lateAccepted++;
      } catch (err) {
        // The service refuses with a domain error (kind `gone` is the API's 410); anything else is a failure.
        const kind = err instanceof AppError ? err.kind : 'error';
        refusals[kind] = (refusals[kind] ?? 0) + 1;
      }
      answers++;
    }
  };
  const stream = Promise.all(Array.from({ length: 4 }, streamLoop));

  const workerStart = due.getTime();
  // Done when the sweeps' logged counts plus what the answer path expired itself (a refused late
  // answer writes EXPIRED when the worker has not yet) cover N; then confirmed by a count.
  let expired = 0;
  for (;;) {
    expired = [...worker.output().matchAll(/"expired":(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    if (expired + answers >= N && (await (await notificationModel(mongo)).countDocuments({ status: 'ACTIVE' })) === 0) break;
    if (wallMs() - workerStart > 1_800_000) throw new Error(`worker expired only ${expired} of ${N}`);
    await sleep(20);
  }
  const workerMs = wallMs() - workerStart;
  stop = true;
  await stream;
  const stillActive = await (await notificationModel(mongo)).countDocuments({ status: 'ACTIVE' });
  const ratio = workerMs / bareMs;
  console.log(
    `worker: ${round(workerMs)} ms from expiresAt to all EXPIRED (sweep every ${SWEEP_MS} ms); ratio ${round(ratio, 3)}; answers ${answers}, late accepted ${lateAccepted}`,
  );

  // Lag at a steady rate: RATE expiries per second for RATE_SECONDS through the delayed jobs.
  await worker.stop();
  await (await notificationModel(mongo)).deleteMany({});
  const rateWorker = await startNode(
    'notification worker (rate)',
    join(distDir, 'workers', 'notifications', 'main.js'),
    { ...env, NOTIFICATION_SWEEP_INTERVAL_MS: String(RATE_SWEEP_MS) },
    { ready: /notification-callback worker running/ },
  );
  cleanup(rateWorker.stop);
  const count = RATE * RATE_SECONDS;
  const firstDue = Date.now() + 5000 + count; // leaves time to create them (about 1 ms each)
  const uuids: string[] = [];
  for (let i = 0; i < count; i += 200) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(200, count - i) }, async (_, k) => {
        const doc = pendingDoc(i + k, new Date(firstDue + ((i + k) * 1000) / RATE), new Date());
        await (await notificationModel(mongo)).collection.insertOne(toNotificationDoc(doc) as never);
        await enqueueExpiry(queue, doc.notificationUuid, doc.expiresAt);
        return doc.notificationUuid;
      }),
    );
    uuids.push(...batch);
  }
  if (Date.now() > firstDue) throw new Error('creating the rate set took longer than planned');
  await sleep(firstDue + RATE_SECONDS * 1000 + 3000 - Date.now());
  const rows = await (
    await notificationModel(mongo)
  )
    .find({}, { _id: 0, status: 1, expiresAt: 1, answeredAt: 1 })
    .lean<Pick<Notification, 'status' | 'expiresAt' | 'answeredAt'>[]>();
  const lags = rows.filter((r) => r.status === 'EXPIRED').map((r) => (r.answeredAt as Date).getTime() - r.expiresAt.getTime());
  const lag = {
    expired: lags.length,
    of: count,
    p50: percentile(lags, 50),
    p99: percentile(lags, 99),
    max: Math.max(...lags),
    min: Math.min(...lags),
  };

  printTable(
    [
      'N',
      'bare updateMany ms',
      'worker ms',
      'ratio',
      'goal',
      'late answers accepted',
      `lag p50 ms @${RATE}/s (sweep ${RATE_SWEEP_MS} ms)`,
      'lag p99 ms',
      'lag max ms',
    ],
    [[N, round(bareMs), round(workerMs), round(ratio, 3), `<= ${GOAL}`, lateAccepted, lag.p50, lag.p99, lag.max]],
  );
  const file = writeResult('expire', {
    benchmark: 'expire',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    knobs: { N, RATE, RATE_SECONDS, SWEEP_MS, RATE_SWEEP_MS, MONGO_JVM_OPTIONS },
    bulk: {
      bareMs: round(bareMs),
      bareModified: bare.modifiedCount,
      workerMs: round(workerMs),
      ratio: round(ratio, 3),
      goal: GOAL,
      expiredBySweep: expired,
      stillActive,
      answers,
      lateAccepted,
      refusals,
    },
    rate: lag,
  });
  console.log(`result: ${file}`);
  if (stillActive !== 0 || lateAccepted !== 0) throw new Error('a notification stayed ACTIVE or a late answer was accepted');
});
