import type { Connection } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { createOtpsRepository, OTP_KEPT_AFTER_EXPIRY_SECONDS } from '../../core/otp/otps.repository.js';
import { createWebhookEventsRepository } from '../../core/providers/webhook-events.repository.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';

const DAY_MS = 24 * 3600 * 1000;

// MongoDB deletes a TTL-indexed document up to a minute after its time; the local server never
// does. Readers check the time themselves, so both answer the same whether the TTL has run or not.
describe('expiry checked on read where a TTL index deletes', () => {
  let mongo: Connection;
  beforeAll(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('ttlreads')));
  });
  afterAll(async () => {
    await mongo.dropDatabase();
    await mongo.close();
  });

  test('when a webhook event was recorded more than 30 days ago, then it reads as forgotten and one new delivery takes it over', async () => {
    await createWebhookEventsRepository(mongo).markWebhookEventSeen('sendgrid', 'warm-up');
    await mongo
      .collection('webhook_events')
      .insertOne({ provider: 'sendgrid', eventId: 'old', receivedAt: new Date(Date.now() - 31 * DAY_MS) });
    await mongo
      .collection('webhook_events')
      .insertOne({ provider: 'sendgrid', eventId: 'recent', receivedAt: new Date(Date.now() - 29 * DAY_MS) });
    expect(await createWebhookEventsRepository(mongo).isWebhookEventSeen('sendgrid', 'old')).toBe(false);
    expect(await createWebhookEventsRepository(mongo).isWebhookEventSeen('sendgrid', 'recent')).toBe(true);
    const takers = await Promise.all([1, 2, 3].map(() => createWebhookEventsRepository(mongo).markWebhookEventSeen('sendgrid', 'old')));
    expect(takers.filter(Boolean)).toEqual([true]);
    expect(await createWebhookEventsRepository(mongo).isWebhookEventSeen('sendgrid', 'old')).toBe(true);
    expect(await createWebhookEventsRepository(mongo).markWebhookEventSeen('sendgrid', 'recent')).toBe(false);
  });

  test('when an OTP expired longer ago than its TTL keeps it, then its status reads as unknown', async () => {
    const otps = createOtpsRepository(mongo);
    const record = (otpUuid: string, expiredMsAgo: number) => ({
      otpUuid,
      enterpriseId: 'default',
      clientId: 'c1',
      userId: 'u1',
      digest: 'd',
      hashSpec: 'h',
      attempts: 3,
      attemptsUsed: 0,
      status: 'ACTIVE' as const,
      expiresAt: new Date(Date.now() - expiredMsAgo),
      generateJwt: false,
      channels: ['SMS' as const],
      createdAt: new Date(Date.now() - expiredMsAgo - 60_000),
    });
    await otps.insertIfAbsent(record('purged', OTP_KEPT_AFTER_EXPIRY_SECONDS * 1000 + 60_000));
    await otps.insertIfAbsent(record('kept', OTP_KEPT_AFTER_EXPIRY_SECONDS * 1000 - 60_000));
    expect(await otps.findForClient('purged', 'c1')).toBeUndefined();
    expect(await otps.findForClient('kept', 'c1')).toMatchObject({ otpUuid: 'kept', status: 'ACTIVE' });
  });
});
