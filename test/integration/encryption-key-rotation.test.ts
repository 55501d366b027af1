import { randomBytes, randomUUID } from 'node:crypto';
import { adminRequest } from '../support/admin-requests.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { createClientsRepository } from '../../core/clients/clients.repository.js';
import { readCallbackSecret } from '../../core/clients/callback-secret.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { decryptSecret, decryptSecretWithKey, encryptSecret } from '../../core/crypto/secret-box.js';
import { resealStore } from '../../core/sealing/reseal.js';
import { SealedWithAnotherKeyError, checkSealingKeyAtStart } from '../../core/sealing/sealing-key-check.js';
import { SEALED_COLLECTIONS } from '../../core/sealing/sealed-values.js';
import type { Connection } from 'mongoose';
import { spawnProcessEntry } from '../support/worker-process.js';

const keyA = randomBytes(32).toString('hex');
const keyB = randomBytes(32).toString('hex');
const CODE = JSON.stringify({ __SVC_OTP__: '424242' });

/** Every sealed value MongoDB keeps, by collection and path. */
async function sealedValues(mongo: Connection): Promise<{ where: string; sealed: string; context: string }[]> {
  const found: { where: string; sealed: string; context: string }[] = [];
  for (const spec of SEALED_COLLECTIONS) {
    for (const doc of await mongo.db!.collection(spec.collection).find(spec.filter).toArray()) {
      for (const value of spec.values(doc)) found.push({ where: `${spec.collection}.${value.path}`, ...value });
    }
  }
  return found;
}

/** What a restarted service must still open: token signing keys, the VAPID key, the callback secret, a queued code. */
async function expectEverythingOpens(service: TestService, clientId: string, callbackSecret: string, deliveryId: string) {
  const { encryptionKey } = otpKeysFromConfig(service.config);
  await expect(service.services.authServer.signingKeys()).resolves.toBeDefined();
  expect((await fetch(`${service.url}/svc/authserver/jwks`)).status).toBe(200);
  await expect(service.services.push.vapidKeys()).resolves.toMatchObject({ publicKey: expect.any(String) });
  expect(await readCallbackSecret(createClientsRepository(service.ctx.mongo), clientId, encryptionKey)).toBe(callbackSecret);
  const row = await service.ctx.mongo.db!.collection('deliveries').findOne({ _id: deliveryId as never });
  expect(decryptSecret(row?.secretMacros as string, encryptionKey, deliveryId)).toBe(CODE);
}

describe('changing OTP_ENCRYPTION_KEY', () => {
  let first: TestService | undefined;
  let store: Record<string, string>;
  let clientId: string;
  let callbackSecret: string;
  const deliveryId = randomUUID();

  beforeAll(async () => {
    // Key A seals: the signing keys and VAPID key (first use), a client's callback secret, a queued code.
    first = await startTestService('keyrotation', { OTP_ENCRYPTION_KEY: keyA });
    store = { MONGODB_URI: first.env.MONGODB_URI, QUEUE_PREFIX: first.env.QUEUE_PREFIX, OTP_HMAC_KEY: first.env.OTP_HMAC_KEY };
    await first.services.authServer.signingKeys();
    await first.services.push.vapidKeys();
    // A rotation keeps its new keys sealed in their own document (value.keys[i].sealed).
    expect((await adminRequest(first, 'POST', '/admin/signing-keys/rotation')).status).toBe(200);
    const created = await adminRequest(first, 'POST', '/admin/clients', { name: 'rotating', scopes: ['otp'] });
    expect(created.status).toBe(201);
    ({ client_id: clientId, callback_secret: callbackSecret } = (await created.json()) as { client_id: string; callback_secret: string });
    const sealed = encryptSecret(CODE, Buffer.from(keyA, 'hex'), deliveryId);
    await first.ctx.mongo.db!.collection('deliveries').insertOne({ _id: deliveryId as never, state: 'QUEUED', secretMacros: sealed });
    await first.close();
    first = undefined;
  }, 60_000);

  afterAll(async () => {
    await first?.close();
  });

  test('when the service restarts with a new key and the old one as previous, then everything the old key sealed opens, and new seals use the new key only', async () => {
    const service = await startTestService('keyrotation', { ...store, OTP_ENCRYPTION_KEY: keyB, OTP_ENCRYPTION_KEYS_PREVIOUS: keyA });
    try {
      await expectEverythingOpens(service, clientId, callbackSecret, deliveryId);
      const rotated = await adminRequest(service, 'POST', `/admin/clients/${clientId}/callback-secret`);
      expect(rotated.status).toBe(200);
      const stored = await service.ctx.mongo.db!.collection('clients').findOne({ clientId });
      const newSecret = ((await rotated.json()) as { callback_secret: string }).callback_secret;
      expect(decryptSecretWithKey(stored?.callbackSecretEncrypted as string, Buffer.from(keyB, 'hex'), `callback-secret:${clientId}`)).toBe(
        newSecret,
      );
      expect(() =>
        decryptSecretWithKey(stored?.callbackSecretEncrypted as string, Buffer.from(keyA, 'hex'), `callback-secret:${clientId}`),
      ).toThrow();
      callbackSecret = newSecret;
    } finally {
      await service.close();
    }
  }, 60_000);

  test('when the store is re-sealed, then every value opens with the new key alone, a second run changes nothing, and the service starts without the old key', async () => {
    const withPrevious = await startTestService('keyrotation', { ...store, OTP_ENCRYPTION_KEY: keyB, OTP_ENCRYPTION_KEYS_PREVIOUS: keyA });
    const { logger } = memoryLogger();
    try {
      const report = await resealStore(withPrevious.ctx.mongo, otpKeysFromConfig(withPrevious.config).encryptionKey, logger);
      // RS256 and ES256 signing keys, the rotation's two, the VAPID key; the delivery's code (the callback secret was re-sealed with B by its rotation).
      expect(report.total).toEqual({ current: 1, resealed: 6, changedMeanwhile: 0, unopenable: 0 });
      expect(report.collections.server_secrets).toEqual({ current: 0, resealed: 5, changedMeanwhile: 0, unopenable: 0 });
      const values = await sealedValues(withPrevious.ctx.mongo);
      expect(values.length).toBe(7);
      for (const value of values)
        expect({ where: value.where, opens: opensWith(value, keyB) }).toEqual({ where: value.where, opens: true });
      const again = await resealStore(withPrevious.ctx.mongo, otpKeysFromConfig(withPrevious.config).encryptionKey, logger);
      expect(again.total).toEqual({ current: 7, resealed: 0, changedMeanwhile: 0, unopenable: 0 });
    } finally {
      await withPrevious.close();
    }
    const newKeyOnly = await startTestService('keyrotation', { ...store, OTP_ENCRYPTION_KEY: keyB });
    try {
      await expectEverythingOpens(newKeyOnly, clientId, callbackSecret, deliveryId);
    } finally {
      await newKeyOnly.close();
    }
  }, 60_000);

  test('when a process checks its keys at start, then keys that open no stored server secret are refused naming the setting, and a previous key is accepted', async () => {
    const service = await startTestService('keyrotation', { ...store, OTP_ENCRYPTION_KEY: keyB });
    try {
      const other = randomBytes(32).toString('hex');
      const refused = checkSealingKeyAtStart(
        service.ctx.mongo,
        otpKeysFromConfig({ ...service.config, otpEncryptionKey: other }).encryptionKey,
      );
      await expect(refused).rejects.toBeInstanceOf(SealedWithAnotherKeyError);
      await expect(refused).rejects.toThrow(/OTP_ENCRYPTION_KEY/);
      const keyring = otpKeysFromConfig({ ...service.config, otpEncryptionKey: other, otpEncryptionKeysPrevious: keyB }).encryptionKey;
      await expect(checkSealingKeyAtStart(service.ctx.mongo, keyring)).resolves.toBeUndefined();
    } finally {
      await service.close();
    }
  }, 60_000);
});

describe('npm run reseal', () => {
  test('when it runs over a store holding a value the previous key sealed and one no key opens, then --check counts both and writes nothing, the run re-seals the first, prints the counts and exits 3; the next run has only the unopenable one left, and --check exits 0 once it is gone', async () => {
    const service = await startTestService('resealcommand', { OTP_ENCRYPTION_KEY: keyB });
    try {
      const rows = service.ctx.mongo.db!.collection('deliveries');
      const [old, lost] = [randomUUID(), randomUUID()];
      await rows.insertMany([
        { _id: old as never, state: 'QUEUED', secretMacros: encryptSecret(CODE, Buffer.from(keyA, 'hex'), old) },
        { _id: lost as never, state: 'QUEUED', secretMacros: encryptSecret(CODE, randomBytes(32), lost) },
      ]);
      const env = { MONGODB_URI: service.env.MONGODB_URI, OTP_ENCRYPTION_KEY: keyB, OTP_ENCRYPTION_KEYS_PREVIOUS: keyA, LOG_LEVEL: 'info' };
      // --check writes nothing: it says what only A opens (not yet safe to drop A) and what no key opens.
      const before = await checkRun(env);
      expect(before.exited).toEqual({ code: 3, signal: null });
      expect(before.report.collections.deliveries).toEqual({ current: 0, previousKey: 1, unopenable: 1 });
      expect(opensWith({ sealed: (await rows.findOne({ _id: old as never }))?.secretMacros as string, context: old }, keyA)).toBe(true);

      const run = spawnProcessEntry('scripts/reseal.js', env);
      expect(await run.exited).toEqual({ code: 3, signal: null });
      const report = JSON.parse(run.output().slice(run.output().indexOf('{\n'))) as { collections: Record<string, unknown> };
      expect(report.collections.deliveries).toEqual({ current: 0, resealed: 1, changedMeanwhile: 0, unopenable: 1 });
      expect(run.output()).toContain(lost);
      expect(run.output()).not.toContain(keyA);
      const row = await rows.findOne({ _id: old as never });
      expect(decryptSecretWithKey(row?.secretMacros as string, Buffer.from(keyB, 'hex'), old)).toBe(CODE);
      const again = spawnProcessEntry('scripts/reseal.js', env);
      expect(await again.exited).toEqual({ code: 3, signal: null });
      expect(again.output()).toContain('"resealed": 0');
      expect(again.output()).toContain('"unopenable": 1');

      expect((await checkRun(env)).report.total).toMatchObject({ previousKey: 0, unopenable: 1 });
      // Once the lost value is dealt with (here: removed), nothing holds A's seal or none: safe to drop A.
      await rows.deleteOne({ _id: lost as never });
      const after = await checkRun(env);
      expect(after.exited).toEqual({ code: 0, signal: null });
      expect(after.report.total).toMatchObject({ previousKey: 0, unopenable: 0 });
    } finally {
      await service.close();
    }
  });
});

/** `npm run reseal -- --check`: how it exited and the counts it printed. */
async function checkRun(env: Record<string, string>) {
  const run = spawnProcessEntry('scripts/reseal.js', env, ['--check']);
  const exited = await run.exited;
  const output = run.output();
  const report = JSON.parse(output.slice(output.indexOf('{\n'), output.lastIndexOf('\n}') + 2)) as {
    collections: Record<string, unknown>;
    total: Record<string, number>;
  };
  return { exited, report };
}

function opensWith(value: { sealed: string; context: string }, hex: string): boolean {
  try {
    decryptSecretWithKey(value.sealed, Buffer.from(hex, 'hex'), value.context);
    return true;
  } catch {
    return false;
  }
}
