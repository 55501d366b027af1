import { createECDH, randomBytes, type ECDH } from 'node:crypto';
import webPush from 'web-push';
import { encryptSecret } from '../../../core/crypto/secret-box.js';
import { loadConfig } from '../../../core/platform/config/config.js';
import { classifyPushStatus } from '../../../core/push/push-sender.js';
import { loadVapidKeys, type VapidKeys } from '../../../core/push/vapid-keys.js';
import { pushBackoffMs as pushBackoffMsFor } from '../../../core/platform/queues/push.queue.js';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/x', REDIS_URL: 'redis://127.0.0.1:6379' };

describe('configuration of Web Push', () => {
  test('when nothing is set, then keys come from MongoDB, the subject is the sender address, loopback endpoints only in development', () => {
    const push = loadConfig(base).push;
    expect(push).toMatchObject({
      vapidKeys: undefined,
      vapidSubject: 'mailto:no-reply@example.com',
      subscriptionsPerUser: 10,
      endpointAddresses: { allowLoopback: true, allowedNetworks: [] },
    });
    expect(loadConfig({ ...base, NODE_ENV: 'test' }).push.endpointAddresses.allowLoopback).toBe(false);
    expect(loadConfig({ ...base, NODE_ENV: 'test', PUSH_ENDPOINT_ALLOW_LOOPBACK: 'on' }).push.endpointAddresses.allowLoopback).toBe(true);
  });

  test('when a VAPID key pair is given, then it is used; half a pair or keys that do not belong together stop the start', () => {
    const pair = webPush.generateVAPIDKeys();
    const other = webPush.generateVAPIDKeys();
    const config = loadConfig({
      ...base,
      VAPID_PUBLIC_KEY: pair.publicKey,
      VAPID_PRIVATE_KEY: pair.privateKey,
      VAPID_SUBJECT: 'https://id.example.com/contact',
    });
    expect(config.push.vapidKeys).toEqual(pair);
    expect(config.push.vapidSubject).toBe('https://id.example.com/contact');
    expect(() => loadConfig({ ...base, VAPID_PUBLIC_KEY: pair.publicKey })).toThrow('set together or not at all');
    expect(() => loadConfig({ ...base, VAPID_PUBLIC_KEY: pair.publicKey, VAPID_PRIVATE_KEY: other.privateKey })).toThrow(
      'VAPID_PRIVATE_KEY: must be the P-256 private key of VAPID_PUBLIC_KEY',
    );
    expect(() => loadConfig({ ...base, VAPID_SUBJECT: 'http://id.example.com' })).toThrow('VAPID_SUBJECT');
  });
});

describe('push service answers', () => {
  test.each([
    [201, 'accepted'],
    [202, 'accepted'],
    [404, 'gone'],
    [410, 'gone'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [400, 'rejected'],
    [403, 'rejected'],
    [413, 'rejected'],
  ])('when the push service answers %i, then it is %s', (status, answer) => {
    expect(classifyPushStatus(status)).toBe(answer);
  });

  test('when a push is retried, then the delay doubles from the base up to five minutes', () => {
    expect([1, 2, 3, 4].map((n) => pushBackoffMsFor(n, 1000))).toEqual([1000, 2000, 4000, 8000]);
    expect(pushBackoffMsFor(20, 1000)).toBe(300_000);
  });
});

describe('VAPID keys', () => {
  const encryptionKey = randomBytes(32);
  const subscription = {
    endpoint: 'https://push.example.com/send/1',
    keys: { p256dh: createECDH('prime256v1').generateKeys('base64url'), auth: randomBytes(16).toString('base64url') },
  };
  /** A key pair whose private scalar starts with a zero byte: Node gives it as 31 bytes (1 pair in 256). */
  function pairWithLeadingZero(): ECDH {
    for (;;) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      if (ecdh.getPrivateKey().length < 32) return ecdh;
    }
  }
  /** The server-secrets store in memory: the first generated value is kept, as in MongoDB. */
  function memorySecrets(kept?: unknown) {
    return {
      async ensureServerSecret<T>(_name: string, generate: () => Promise<T>): Promise<T> {
        kept ??= await generate();
        return kept as T;
      },
    };
  }
  const signs = (keys: VapidKeys) => () =>
    webPush.generateRequestDetails(subscription, 'x', {
      vapidDetails: { subject: 'mailto:ops@example.com', publicKey: keys.publicKey, privateKey: keys.privateKey },
    });

  test('when the private key starts with a zero byte (generated, stored earlier, or configured), then web-push gets 32 bytes of the same key and signs with it', async () => {
    const ecdh = pairWithLeadingZero();
    const publicKey = ecdh.getPublicKey('base64url');
    const shortPrivate = ecdh.getPrivateKey('base64url');
    const storedEarlier = { publicKey, privateKeyBox: encryptSecret(shortPrivate, encryptionKey, 'vapid-private-key') };
    const loaded = [
      await loadVapidKeys(memorySecrets(), { vapidKeys: undefined }, encryptionKey, () => ecdh),
      await loadVapidKeys(memorySecrets(storedEarlier), { vapidKeys: undefined }, encryptionKey),
      await loadVapidKeys(memorySecrets(), { vapidKeys: { publicKey, privateKey: shortPrivate } }, encryptionKey),
    ];
    for (const keys of loaded) {
      expect(keys.publicKey).toBe(publicKey);
      expect(Buffer.from(keys.privateKey, 'base64url')).toHaveLength(32);
      const again = createECDH('prime256v1');
      again.setPrivateKey(Buffer.from(keys.privateKey, 'base64url'));
      expect(again.getPublicKey('base64url')).toBe(publicKey);
      expect(signs(keys)).not.toThrow();
    }
  });
});
