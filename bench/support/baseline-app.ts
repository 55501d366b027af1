// The baseline of bench/otp-accept and bench/otp-e2e: a minimal Express app doing what the
// OTP request costs at its core, one MongoDB insert and one `queue.add` with the dispatch job's
// name, payload shape and options, and nothing else (no auth, schema, templates, users, limits).
import { randomUUID } from 'node:crypto';
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
const otps = mongo.collection<{ _id: string; userId: unknown; createdAt: Date }>('baseline_otps');

const app = express();
app.use(express.json());
app.post('/v1/svc-otp', async (req, res) => {
  const otpUuid = randomUUID();
  await otps.insertOne({ _id: otpUuid, userId: (req.body as { userId?: unknown }).userId, createdAt: new Date() });
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
