// The baseline worker: a bare BullMQ Worker on the dispatch queue that posts each job to the
// provider stub (Twilio's Messages API, To = the delivery id) and nothing else: with fetch by
// default, or with the twilio SDK (BARE_CLIENT=sdk, the client the project must use) to show how
// much of the difference is the SDK's own cost. With BARE_WORK=required (MONGODB_URI set) it also
// does the store work the service must do per message, the plainest way: it reads the
// delivery row (skipping rows no longer QUEUED) and records the outcome on it.
import { Worker } from 'bullmq';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import twilio from 'twilio';
import type { DispatchJobData } from '../../core/platform/queues/dispatch.queue.js';
import { createWorkerRedis } from '../../core/platform/queues/redis-connection.js';

const stubUrl = process.env.STUB_URL ?? '';
const accountSid = process.env.TWILIO_ACCOUNT_SID ?? 'AC0';
const auth = `Basic ${Buffer.from(`${accountSid}:${process.env.TWILIO_AUTH_TOKEN ?? 'x'}`).toString('base64')}`;
const connection = createWorkerRedis({ kind: 'single', url: process.env.REDIS_URL ?? '' });
const rows =
  process.env.BARE_WORK === 'required'
    ? (await connectMongo(process.env.MONGODB_URI ?? '')).collection<{ _id: string; state: string }>(
        process.env.ROWS_COLLECTION ?? 'deliveries',
      )
    : undefined;
const sdk =
  process.env.BARE_CLIENT === 'sdk'
    ? twilio(accountSid, process.env.TWILIO_AUTH_TOKEN ?? 'x', {
        autoRetry: false,
        httpClient: new twilio.RequestClient({ keepAlive: true }),
      })
    : undefined;
if (sdk) sdk.api.baseUrl = stubUrl;
async function send(deliveryId: string): Promise<{ state: 'SENT'; providerMessageId?: string }> {
  if (sdk) {
    const sent = await sdk.messages.create({ to: deliveryId, from: '+15005550006', body: 'Your code is 123456.' });
    return { state: 'SENT', providerMessageId: sent.sid };
  }
  const res = await fetch(`${stubUrl}/2010-04-01/Accounts/${accountSid}/Messages.json`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ To: deliveryId, From: '+15005550006', Body: 'Your code is 123456.' }).toString(),
  });
  const body = (await res.json()) as { sid?: string };
  if (res.status !== 201) throw new Error(`stub answered ${res.status}`);
  return { state: 'SENT', providerMessageId: body.sid };
}

const worker = new Worker<DispatchJobData>(
  'dispatch',
  async (job) => {
    if (!rows) return send(job.data.deliveryId);
    const row = await rows.findOne({ _id: job.data.deliveryId });
    if (row?.state !== 'QUEUED') return { state: 'SKIPPED' };
    const outcome = await send(job.data.deliveryId);
    await rows.updateOne(
      { _id: job.data.deliveryId, state: 'QUEUED' },
      {
        $set: { state: 'SENT', providerMessageId: outcome.providerMessageId, attempts: job.attemptsMade + 1, updatedAt: new Date() },
        $unset: { secretMacros: 1 },
      },
    );
    return outcome;
  },
  {
    connection,
    prefix: process.env.QUEUE_PREFIX ?? 'baseline',
    concurrency: Number(process.env.CONCURRENCY ?? '10'),
    removeOnComplete: { count: 1000, age: 24 * 3600 },
    removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
  },
);
worker.on('error', (err) => console.error('worker error', err.message));
await worker.waitUntilReady();
console.log('bare worker ready');
process.on('SIGTERM', () => {
  void worker.close().then(() => {
    connection.disconnect();
    process.exit(0);
  });
});
