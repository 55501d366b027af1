// The baseline of bench/otp-accept and bench/otp-e2e: a minimal Express app doing what the
// OTP request costs at its core, one MongoDB insert and one `queue.add` with the dispatch job's
// name, payload shape and options, and nothing else (no auth, schema, templates, users, limits).
// The insert is the project's: a document of the OTP record's shape, into a collection with the
// indexes of core/otp/otps.repository.ts (a smaller document without indexes costs the server less).
import { createHmac, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Queue } from 'bullmq';
import { connectMongo } from '../../core/db/mongo-connection.js';
import { DISPATCH_JOB, DISPATCH_JOB_OPTIONS, type DispatchJobData } from '../../core/queues/dispatch.queue.js';
import { createProducerRedis, waitForRedis } from '../../core/queues/redis-connection.js';

const mongo = await connectMongo(process.env.MONGODB_URI ?? '');
const redis = createProducerRedis(process.env.REDIS_URL ?? '');
await waitForRedis(redis);
const queue = new Queue('dispatch', { connection: redis, prefix: process.env.QUEUE_PREFIX ?? 'baseline' });
const otps = mongo.collection<Record<string, unknown> & { _id: string }>('baseline_otps');
await otps.createIndex({ userId: 1, createdAt: -1 });
await otps.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 7 * 24 * 3600 });
const digestKey = Buffer.alloc(32, 7);

const app = express();
app.use(express.json());
app.post('/v1/svc-otp', async (req, res) => {
  const otpUuid = randomUUID();
  const createdAt = new Date();
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
