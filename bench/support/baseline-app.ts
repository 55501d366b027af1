// The baseline of bench/otp-accept and bench/otp-e2e: a minimal Express app doing what the
// OTP request costs at its core, one MongoDB insert and one `queue.add` with the dispatch job's
// name, payload shape and options, and nothing else (no auth, schema, templates, users, limits).
// The insert is the project's: a document of the OTP record's shape, into a collection with the
// indexes of core/otp/otps.repository.ts (a smaller document without indexes costs the server less).
// With BASELINE_WORK=required it also does the store work the service must do for an OTP
// request, each step the plainest way (no batching): the user read, the two rate-limit calls
// (rate-limiter-flexible on Redis) and the delivery row insert (with the deliveries' indexes). It
// still skips what is not store work: auth, schema, templates, crypto, logging.
import { createHmac, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Queue } from 'bullmq';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { DISPATCH_JOB, DISPATCH_JOB_OPTIONS, type DispatchJobData } from '../../core/platform/queues/dispatch.queue.js';
import { createProducerRedis, waitForRedis } from '../../core/platform/queues/redis-connection.js';

const mongo = await connectMongo(process.env.MONGODB_URI ?? '');
const redis = createProducerRedis({ kind: 'single', url: process.env.REDIS_URL ?? '' });
await waitForRedis(redis);
const queue = new Queue('dispatch', { connection: redis, prefix: process.env.QUEUE_PREFIX ?? 'baseline' });
const otps = mongo.collection<Record<string, unknown> & { _id: string }>('baseline_otps');
await otps.createIndex({ userId: 1, createdAt: -1 });
await otps.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 7 * 24 * 3600 });
const digestKey = Buffer.alloc(32, 7);

const requiredWork = process.env.BASELINE_WORK === 'required';
const users = mongo.collection<Record<string, unknown>>('baseline_users');
const deliveries = mongo.collection<Record<string, unknown> & { _id: string }>('baseline_deliveries');
const limits = ['perUser', 'perClient'].map(
  (name) => new RateLimiterRedis({ storeClient: redis, keyPrefix: `baseline:rl:${name}`, points: 1e9, duration: 60 }),
);
if (requiredWork) {
  await users.createIndex({ userId: 1 }, { unique: true });
  await users.updateOne({ userId: 'bench-user-0' }, { $set: { status: 'ACTIVE', mobileNumber: '+15550000000' } }, { upsert: true });
  await deliveries.createIndex({ refId: 1 });
  await deliveries.createIndex({ state: 1, queuedAt: 1 });
  await deliveries.createIndex({ providerMessageId: 1 }, { sparse: true });
}

const app = express();
app.use(express.json());
app.post('/v1/svc-otp', async (req, res) => {
  const otpUuid = randomUUID();
  const createdAt = new Date();
  const userId = String((req.body as { userId?: unknown }).userId);
  let mobileNumber = '';
  if (requiredWork) {
    const [user] = await Promise.all([users.findOne({ userId }), limits[0]?.consume(userId), limits[1]?.consume('baseline-client')]);
    if (!user) {
      res.status(404).json({ message: 'User not found' });
      return;
    }
    mobileNumber = String(user.mobileNumber);
  }
  await otps.insertOne({
    _id: otpUuid,
    clientId: 'baseline',
    userId: (req.body as { userId?: unknown }).userId,
    digest: createHmac('sha256', digestKey).update(`${otpUuid}:123456`).digest('base64url'),
    hashSpec: 'NONE',
    attempts: 3,
    attemptsUsed: 0,
    status: 'ACTIVE',
    expiresAt: new Date(createdAt.getTime() + 300_000),
    generateJwt: false,
    channels: ['SMS'],
    createdAt,
  });
  const deliveryId = `otp-${otpUuid}-SMS`;
  if (requiredWork) {
    await deliveries.insertOne({
      _id: deliveryId,
      kind: 'otp',
      refId: otpUuid,
      channel: 'SMS',
      to: mobileNumber,
      template: 'otp_sms',
      macros: {},
      state: 'QUEUED',
      attempts: 0,
      notAfter: new Date(createdAt.getTime() + 300_000),
      queuedAt: createdAt,
      updatedAt: createdAt,
    });
  }
  await queue.add(DISPATCH_JOB, { deliveryId } satisfies DispatchJobData, { ...DISPATCH_JOB_OPTIONS, jobId: deliveryId });
  res.status(200).json({ otpUuid });
});
const server = app.listen(Number(process.env.PORT ?? '0'), '127.0.0.1', () => {
  console.log(`baseline listening ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => {
  server.close();
  void Promise.allSettled([queue.close(), mongo.close()]).then(() => {
    redis.disconnect();
    process.exit(0);
  });
});
