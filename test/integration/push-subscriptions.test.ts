import { createECDH, randomBytes } from 'node:crypto';
import { createPushSubscriptionsRepository } from '../../core/push/push-subscriptions.repository.js';
import { createPushSubscriptionsService } from '../../core/push/push-subscriptions.service.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { mintUserToken, registerAppClient } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { errorBody, sendJson } from '../support/users-helpers.js';

/** What a browser's PushSubscription.toJSON() gives, for a push service at `endpoint`. */
function browserSubscription(endpoint: string): { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') } };
}

const PATH = '/v1/me/push-subscriptions';
const endpointOf = (n: number | string) => `https://push.example.com/send/${n}`;

describe('Push subscriptions of the signed-in user', () => {
  let service: TestService;
  let alice: string;
  let bob: string;
  let acmeAlice: string;
  let enterpriseToken: string;

  beforeAll(async () => {
    service = await startTestService('pushsubs', { PUSH_SUBSCRIPTIONS_PER_USER: '3' });
    const app = await registerAppClient(service);
    await insertUser(service.ctx.mongo, { userId: 'alice' });
    await insertUser(service.ctx.mongo, { userId: 'bob' });
    // The same user id in another enterprise is another person.
    await insertUser(service.ctx.mongo, { userId: 'alice', enterpriseId: 'acme' });
    const acmeApp = await registerAppClient(service, { name: 'acme app', enterpriseId: 'acme' });
    alice = await mintUserToken(service, { userId: 'alice', clientId: app });
    bob = await mintUserToken(service, { userId: 'bob', clientId: app });
    acmeAlice = await mintUserToken(service, { userId: 'alice', clientId: acmeApp });
    enterpriseToken = (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const call = (method: string, path: string, token: string) =>
    fetch(`${service.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const register = (token: string, body: unknown) => sendJson(`${service.url}${PATH}`, 'POST', token, body);
  const list = async (token: string) => {
    const res = await call('GET', PATH, token);
    expect(res.status).toBe(200);
    return ((await res.json()) as { subscriptions: { subscription_id: string; endpoint: string }[] }).subscriptions;
  };
  const remove = (token: string, id: string) => call('DELETE', `${PATH}/${id}`, token);
  const refusal = (status: number, error: string, message: string, path = PATH) => ({
    ...errorBody(status, error, message, path),
    code: 4,
  });

  test('when the app asks for the push key, then it gets one P-256 public key, the same every time, kept in MongoDB with its private half sealed', async () => {
    const first = await call('GET', '/v1/me/push-key', alice);
    expect(first.status).toBe(200);
    const { applicationServerKey } = (await first.json()) as { applicationServerKey: string };
    expect(Buffer.from(applicationServerKey, 'base64url')).toHaveLength(65);
    expect(await (await call('GET', '/v1/me/push-key', acmeAlice)).json()).toEqual({ applicationServerKey });
    const stored = (await service.ctx.mongo.collection('server_secrets').findOne({ name: 'vapid-keys' })) as unknown as {
      value: { publicKey: string; privateKeyBox: string };
    };
    expect(stored.value.publicKey).toBe(applicationServerKey);
    expect(stored.value.privateKeyBox).toMatch(/^v1\./);
  });

  test('when a subscription is registered, then 201 with Location, and the same endpoint again is 200 with the same id and new keys', async () => {
    const body = browserSubscription(endpointOf('a1'));
    const res = await register(alice, body);
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, string>;
    expect(created).toEqual({
      subscription_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
      endpoint: body.endpoint,
      created_at: expect.any(String) as unknown,
      updated_at: expect.any(String) as unknown,
    });
    expect(res.headers.get('location')).toBe(`${PATH}/${created.subscription_id}`);

    const renewed = browserSubscription(endpointOf('a1'));
    const again = await register(alice, { ...renewed, expirationTime: Date.now() + 86_400_000 });
    expect(again.status).toBe(200);
    const updated = (await again.json()) as Record<string, string>;
    expect(updated).toMatchObject({ subscription_id: created.subscription_id, expiration_time: expect.any(String) as unknown });
    expect(await list(alice)).toEqual([expect.objectContaining({ subscription_id: created.subscription_id, endpoint: body.endpoint })]);

    // The auth secret is stored sealed, the new keys replaced the old.
    const record = await service.ctx.mongo.collection('push_subscriptions').findOne({ subscriptionId: created.subscription_id });
    expect(record?.p256dh).toBe(renewed.keys.p256dh);
    expect(JSON.stringify(record)).not.toContain(renewed.keys.auth);
    expect(await remove(alice, created.subscription_id as string)).toHaveProperty('status', 204);
  });

  test.each([
    [
      'http to a public host',
      { endpoint: 'http://push.example.com/x' },
      'Invalid field endpoint: must be https (http only on loopback, where allowed)',
    ],
    [
      'a private address',
      { endpoint: 'https://10.1.2.3/x' },
      'Invalid field endpoint: must reach a public address (10.1.2.3 is in the private range)',
    ],
    [
      'loopback in another spelling',
      { endpoint: 'https://127.1/x' },
      'Invalid field endpoint: must reach a public address (127.0.0.1 is in the loopback range)',
    ],
    [
      'IPv4-mapped loopback',
      { endpoint: 'https://[::ffff:127.0.0.1]/x' },
      'Invalid field endpoint: must reach a public address (127.0.0.1 is in the loopback range)',
    ],
    [
      'link-local metadata address',
      { endpoint: 'https://169.254.169.254/latest' },
      'Invalid field endpoint: must reach a public address (169.254.169.254 is in the link-local range)',
    ],
    ['credentials', { endpoint: 'https://u:p@push.example.com/x' }, 'Invalid field endpoint: must not carry credentials'],
    ['not a URL', { endpoint: 'push.example.com/x' }, 'Invalid field endpoint: must be an absolute URL'],
    [
      'a key off the curve',
      {
        keys: {
          p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url'),
          auth: randomBytes(16).toString('base64url'),
        },
      },
      'Invalid field keys.p256dh: must be a P-256 public key (65-byte uncompressed point, base64url)',
    ],
    ['an expiration in the past', { expirationTime: Date.now() - 1000 }, 'Invalid field expirationTime: is in the past'],
    ['an expiration past any date', { expirationTime: 1e20 }, 'Invalid field expirationTime: must be <= 253402300799999'],
    // A JavaScript Date holds it, but its ISO form (+275760-…) is no RFC 3339 date-time for the answer.
    ['an expiration past year 9999', { expirationTime: 8639999999999999 }, 'Invalid field expirationTime: must be <= 253402300799999'],
    ['no keys', { keys: undefined }, "Invalid field keys: must have required property 'keys'"],
    ['an unknown field', { extra: 1 }, 'Invalid field extra: is not allowed'],
  ])('when the subscription has %s, then 422 with what is wrong and nothing is stored', async (_name, change, message) => {
    const res = await register(bob, { ...browserSubscription(endpointOf('bad')), ...change });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(refusal(422, 'Invalid data.', message));
    expect(await list(bob)).toEqual([]);
  });

  test('when the body is not JSON, or the token is an enterprise token or missing, then 400 / 401 with client library codes', async () => {
    const res = await fetch(`${service.url}${PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob}`, 'content-type': 'application/json' },
      body: '{',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 4 });
    for (const token of [enterpriseToken, undefined]) {
      const refused = await fetch(`${service.url}${PATH}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 39 });
    }
    expect((await fetch(`${service.url}/v1/me/push-key`)).status).toBe(401);
  });

  test('when a user has as many subscriptions as allowed, then another is 409 until one is deleted, and re-registering a known one still works', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const res = await register(bob, browserSubscription(endpointOf(`cap${n}`)));
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { subscription_id: string }).subscription_id);
    }
    const over = await register(bob, browserSubscription(endpointOf('cap4')));
    expect(over.status).toBe(409);
    expect(await over.json()).toEqual(
      refusal(409, 'Conflict', 'Too many push subscriptions: at most 3 per user; delete one you no longer use first'),
    );
    expect((await register(bob, browserSubscription(endpointOf('cap2')))).status).toBe(200);
    expect((await list(bob)).map((s) => s.subscription_id)).toEqual(ids);
    expect((await remove(bob, ids[0] as string)).status).toBe(204);
    expect((await register(bob, browserSubscription(endpointOf('cap4')))).status).toBe(201);
    for (const s of await list(bob)) expect((await remove(bob, s.subscription_id)).status).toBe(204);
  });

  test('when the same browser registers several times at once, then one record is made (one 201, the others 200)', async () => {
    const body = browserSubscription(endpointOf('race'));
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => register(bob, body)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    const ids = new Set(await Promise.all(answers.map(async (r) => ((await r.json()) as { subscription_id: string }).subscription_id)));
    expect(ids.size).toBe(1);
    expect(await list(bob)).toHaveLength(1);
    for (const s of await list(bob)) expect((await remove(bob, s.subscription_id)).status).toBe(204);
  });

  test('when more new browsers than allowed register at once, then no more than the cap are kept and the others get 409', async () => {
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => register(bob, browserSubscription(endpointOf(`burst${n}`)))));
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const kept = await list(bob);
    expect(kept.length).toBeLessThanOrEqual(3);
    expect(kept.length).toBe(statuses.filter((status) => status === 201).length);
    for (const s of kept) expect((await remove(bob, s.subscription_id)).status).toBe(204);
  });

  test('when another user, or the same user id of another enterprise, lists or deletes a subscription, then they neither see nor reach it', async () => {
    const res = await register(alice, browserSubscription(endpointOf('mine')));
    const { subscription_id: id } = (await res.json()) as { subscription_id: string };
    expect(await list(bob)).toEqual([]);
    expect(await list(acmeAlice)).toEqual([]);
    for (const token of [bob, acmeAlice]) {
      const refused = await remove(token, id);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toEqual(refusal(404, 'Not Found', 'Push subscription not found', `${PATH}/${id}`));
    }
    // The same endpoint registered in the other enterprise is that user's own record.
    expect((await register(acmeAlice, browserSubscription(endpointOf('mine')))).status).toBe(201);
    expect(await list(alice)).toHaveLength(1);
    expect((await remove(alice, id)).status).toBe(204);
    expect((await remove(alice, id)).status).toBe(404);
    expect(await list(acmeAlice)).toHaveLength(1);
  });

  test('when loopback endpoints are not allowed (production default), then a loopback endpoint is refused; allowed, it is stored', async () => {
    const owner = { enterpriseId: 'default', userId: 'loopback-user' };
    const make = (allowLoopback: boolean) =>
      createPushSubscriptionsService({
        repository: createPushSubscriptionsRepository(service.ctx.mongo),
        encryptionKey: randomBytes(32),
        endpointPolicy: { allowLoopback, allowedNetworks: [] },
        maxPerUser: 3,
      });
    await expect(make(false).register(owner, browserSubscription('http://127.0.0.1:9/push'))).rejects.toThrow(
      'Invalid field endpoint: must reach a public address (127.0.0.1 is in the loopback range)',
    );
    await expect(make(false).register(owner, browserSubscription('http://localhost:9/push'))).rejects.toThrow('loopback range');
    await expect(make(true).register(owner, browserSubscription('http://127.0.0.1:9/push'))).resolves.toMatchObject({ created: true });
  });
});
