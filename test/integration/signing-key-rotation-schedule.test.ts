import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { newestKeySigningSince, type KeyChain } from '../../core/auth/signing-key-chains.js';
import { createScheduledRotation, type ScheduledRotationOutcome } from '../../core/auth/signing-key-rotation-schedule.js';
import { readKeyChains } from '../../core/auth/signing-key.service.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { eventually } from '../support/waiting.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A scheduled rotation of `service`'s keys that sees the clock `aheadMs` in the future. */
function scheduleOf(service: TestService, aheadMs: number, more: { checkIntervalMs?: number; afterRotation?: () => Promise<void> } = {}) {
  const stores = service.services.signingKeyRotation;
  return createScheduledRotation({
    stores,
    readChains: () => readKeyChains(service.ctx.mongo, service.config, stores.encryptionKey),
    periodDays: 90,
    afterRotation: more.afterRotation ?? (() => Promise.resolve()),
    logger: service.ctx.logger,
    now: () => Date.now() + aheadMs,
    checkIntervalMs: more.checkIntervalMs,
  });
}

async function accessChainKids(service: TestService): Promise<string[]> {
  const chains = await readKeyChains(service.ctx.mongo, service.config, service.services.signingKeyRotation.encryptionKey);
  return (chains.find((chain) => chain.alg === service.config.accessTokenSigningAlg)?.keys ?? []).map((chained) => chained.key.kid);
}

describe('signing keys rotated on schedule (SIGNING_KEY_ROTATION_DAYS)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('keyschedule', { SIGNING_KEY_ROTATION_DAYS: '90' });
    // The first keys exist once the process has read them.
    await service.services.signingKeyRotation.ring.reload();
  });
  afterAll(async () => {
    await service.services.scheduledRotation?.stop();
    await service.close();
  });

  test('when the setting is given, then the API process has a schedule, and with keys made today it finds nothing due', async () => {
    expect(service.services.scheduledRotation).toBeDefined();
    expect(await service.services.scheduledRotation?.check()).toBe('not-due');
  });

  test('when the access-token key has signed for less than the period, then nothing is rotated', async () => {
    const before = await accessChainKids(service);
    expect(await scheduleOf(service, 89 * DAY_MS).check()).toBe('not-due');
    expect(await accessChainKids(service)).toEqual(before);
  });

  test('when several processes find the keys due at the same moment, then exactly one rotates, as the service, and the new key is not due again', async () => {
    const before = await accessChainKids(service);
    const outcomes = await Promise.all([1, 2, 3].map(() => scheduleOf(service, 91 * DAY_MS).check()));
    expect([...outcomes].sort()).toEqual<ScheduledRotationOutcome[]>(['rotated', 'rotated-elsewhere', 'rotated-elsewhere']);
    const after = await accessChainKids(service);
    expect(after.slice(0, -1)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);

    const recorded = await createActivityRepository(service.ctx.mongo).list({ limit: 1 });
    expect(recorded.entries[0]).toMatchObject({
      action: 'signing-keys.rotated',
      actor: { type: 'service' },
      comments: 'scheduled: the key signed for 90 days (SIGNING_KEY_ROTATION_DAYS)',
    });
    // The new key signs from two reload intervals after the rotation: its own period starts then.
    expect(await scheduleOf(service, 91 * DAY_MS).check()).toBe('not-due');
    const chains = await readKeyChains(service.ctx.mongo, service.config, service.services.signingKeyRotation.encryptionKey);
    const newest = newestKeySigningSince(chains.find((chain) => chain.alg === service.config.accessTokenSigningAlg) as KeyChain);
    expect(newest.key.kid).toBe(after.at(-1));
    expect(newest.since).toBeGreaterThan(Date.now() + 90 * DAY_MS);
  });

  test('when started, then it looks on its own and tells the process after it rotated; stop waits for the look under way', async () => {
    const before = await accessChainKids(service);
    let followed = 0;
    const schedule = scheduleOf(service, 400 * DAY_MS, {
      checkIntervalMs: 50,
      afterRotation: async () => {
        followed += 1;
      },
    });
    schedule.start();
    await eventually(async () => (followed >= 1 ? true : undefined), 5000);
    await schedule.stop();
    const after = await accessChainKids(service);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.length).toBeGreaterThan(before.length);
  });

  test('when the access-token key is SIGNING_KEY_JWK, then the schedule leaves it alone', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const configured = await startTestService('keyschedule-configured', {
      SIGNING_KEY_ROTATION_DAYS: '1',
      SIGNING_KEY_JWK: JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'configured-key' }),
      ACCESS_TOKEN_SIGNING_ALG: 'RS256',
      OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
    try {
      expect(await scheduleOf(configured, 400 * DAY_MS).check()).toBe('configured');
      expect(await accessChainKids(configured)).toEqual(['configured-key']);
    } finally {
      await configured.close();
    }
  });
});
