import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import { decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { createServerSecretsRepository } from '../../core/auth/server-secrets.repository.js';
import { signingKeysAt } from '../../core/auth/signing-key-chains.js';
import { rotateSigningKeys, type RotationStores } from '../../core/auth/signing-key-rotation.js';
import { readKeyChains } from '../../core/auth/signing-key.service.js';
import { registerClient } from '../../core/clients/clients.service.js';
import { startMongoServer } from '../../scripts/local-services.js';
import { requestToken } from '../support/auth-helpers.js';
import { postToAuthServer } from '../support/oauth-flow-helpers.js';
import { startTestService, uniqueName, type TestService } from '../support/test-service.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { eventually, untilClockReaches } from '../support/waiting.js';

type App = { clientId: string; clientSecret: string };

interface RotationAnswer {
  rotated: { alg: string; kid: string; previousKid: string; activeFrom: string; previousKeyRemovedAt: string }[];
  idTokenKeyConfigured: boolean;
}

/** One deployment: the same database and server key (which seals the signing keys). */
function deployment(label: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    MONGODB_URI: testMongoUri(uniqueName(label)),
    PUBLIC_URL: 'http://127.0.0.1:9',
    OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ...more,
  };
}

/** Two API processes of one deployment, as `use` needs them; both are closed after it, whatever happens. */
async function withTwoProcesses(
  label: string,
  shared: Record<string, string>,
  use: (first: TestService, second: TestService) => Promise<void>,
): Promise<void> {
  const first = await startTestService(`${label}-a`, shared);
  const second = await startTestService(`${label}-b`, shared);
  try {
    await use(first, second);
  } finally {
    await second.close();
    await first.close();
  }
}

/** svc_signing_key_start_time_seconds of the ES256 key, as the process's /metrics shows it. */
async function signingKeyStartTime(service: TestService): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const value = /^svc_signing_key_start_time_seconds\{alg="ES256"\} (\S+)$/m.exec(text)?.[1];
  if (value === undefined) throw new Error('svc_signing_key_start_time_seconds{alg="ES256"} is not exported');
  return Number(value);
}

async function jwksKids(service: TestService): Promise<string[]> {
  const body = (await (await fetch(`${service.url}/svc/authserver/jwks`)).json()) as { keys: { kid: string }[] };
  return body.keys.map((k) => k.kid);
}

async function clientToken(service: TestService, app: App): Promise<string> {
  const res = await requestToken(service, app);
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

async function introspect(service: TestService, app: App, token: string) {
  return (await (await postToAuthServer(service, '/oauth/introspect', app, { token })).json()) as { active: boolean };
}

/** The status of an enterprise call with `token`: 404 (an unknown OTP) is past the token check, 401 refused it. */
async function enterpriseStatus(service: TestService, token: string): Promise<number> {
  const res = await fetch(`${service.url}/v1/svc-otp/00000000-0000-4000-8000-000000000000`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return res.status;
}

function rotate(service: TestService, query = ''): Promise<Response> {
  return fetch(`${service.url}/admin/signing-keys/rotation${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.config.adminToken}` },
  });
}

async function newApp(service: TestService): Promise<App> {
  const { client, clientSecret } = await registerClient(service.services.clients, {
    name: 'rotation app',
    scopes: ['otp'],
    allowedIps: ['127.0.0.1'],
  });
  return { clientId: client.clientId, clientSecret: clientSecret as string };
}

/** The `signing-keys.rotated` entries of the activity record, newest first. */
async function rotationEntries(service: TestService) {
  const { entries } = await createActivityRepository(service.ctx.mongo).list({ limit: 100 });
  return entries.filter((entry) => entry.action === 'signing-keys.rotated');
}

/** The names of the stored rotation documents, in their order. */
async function rotationDocuments(service: TestService): Promise<string[]> {
  const stored = await createServerSecretsRepository(service.ctx.mongo).findServerSecretsNamedOrPrefixed([], 'signing-key-rotation:');
  return [...stored.keys()].sort((a, b) => Number(a.split(':')[1]) - Number(b.split(':')[1]));
}

/** Both processes read the keys at the same moment (as their periodic reads may). */
async function readTogether(first: TestService, second: TestService): Promise<void> {
  await Promise.all([first.services.signingKeyRotation.ring.reload(), second.services.signingKeyRotation.ring.reload()]);
}

describe('signing key rotation', () => {
  test('when the signing keys are rotated, then every process publishes the new keys before they sign, and tokens of the old key stay valid', async () => {
    const shared = deployment('rotation', { SIGNING_KEY_RELOAD_SECONDS: '1' });
    await withTwoProcesses('rotation', shared, async (first, second) => {
      const app = await newApp(first);
      const oldToken = await clientToken(first, app);
      const oldKids = await jwksKids(second);
      const res = await rotate(first, '?comments=yearly');
      expect(res.status).toBe(200);
      const rotation = (await res.json()) as RotationAnswer;
      expect(rotation.idTokenKeyConfigured).toBe(false);
      expect(rotation.rotated.map((key) => key.alg)).toEqual(['ES256', 'RS256']);
      const [access] = rotation.rotated as [RotationAnswer['rotated'][number]];
      expect(access.previousKid).toBe(kidOf(oldToken));
      // Published before it signs: two reload intervals, then the tokens' life plus one interval.
      expect(Date.parse(access.activeFrom) - Date.now()).toBeGreaterThan(1000);
      expect(Date.parse(access.previousKeyRemovedAt) - Date.parse(access.activeFrom)).toBe((1 + 3600) * 1000);
      // The RSA key that signed ID tokens stays as long as a sign-in session (24 h by default): apps
      // sign users out with an ID token of that session as id_token_hint, checked with that key.
      const idTokens = rotation.rotated[1] as RotationAnswer['rotated'][number];
      expect(Date.parse(idTokens.previousKeyRemovedAt) - Date.parse(idTokens.activeFrom)).toBe((1 + 86400) * 1000);

      // The process that rotated publishes the new keys at once, and does not sign with them yet.
      const newKids = rotation.rotated.map((key) => key.kid);
      expect(await jwksKids(first)).toEqual(expect.arrayContaining([...oldKids, ...newKids]));
      expect(kidOf(await clientToken(first, app))).toBe(access.previousKid);
      // The other one at its next read, before the new key signs.
      await eventually(async () => {
        const kids = await jwksKids(second);
        return newKids.every((kid) => kids.includes(kid)) || undefined;
      }, 5000);
      expect(Date.now()).toBeLessThan(Date.parse(access.activeFrom));

      // The moment every process switches, on its own clock.
      await untilClockReaches(Date.parse(access.activeFrom) + 1);
      const fromFirst = await clientToken(first, app);
      const fromSecond = await clientToken(second, app);
      expect([kidOf(fromFirst), kidOf(fromSecond)]).toEqual([access.kid, access.kid]);
      // The old key's tokens, and the new key's, are accepted by both processes.
      for (const service of [first, second]) {
        expect(await enterpriseStatus(service, oldToken)).toBe(404);
        expect(await enterpriseStatus(service, fromFirst)).toBe(404);
        expect(await introspect(service, app, oldToken)).toMatchObject({ active: true });
        expect(await introspect(service, app, fromSecond)).toMatchObject({ active: true });
      }
      expect(await jwksKids(second)).toEqual(expect.arrayContaining([...oldKids, ...newKids]));

      const activity = (await (
        await fetch(`${first.url}/admin/activity?limit=1`, { headers: { authorization: `Bearer ${first.config.adminToken}` } })
      ).json()) as { activity: unknown[] };
      expect(activity.activity[0]).toMatchObject({
        action: 'signing-keys.rotated',
        actor: { type: 'admin' },
        comments: 'yearly',
        signingKeys: rotation.rotated.map(({ alg, kid, previousKid }) => ({ alg, kid, previousKid })),
      });
    });
  });

  test('when two rotations are asked at the same moment, then one is done and the other is 409', async () => {
    const shared = deployment('rotation-race');
    await withTwoProcesses('rotation-race', shared, async (first, second) => {
      await Promise.all([jwksKids(first), jwksKids(second)]);
      const answers = await Promise.all([rotate(first), rotate(second)]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 409]);
      const refused = answers.find((res) => res.status === 409) as Response;
      expect(await refused.json()).toMatchObject({
        status: 409,
        message: 'Signing keys were rotated by another request at the same time; rotate again',
      });
      // The winner's keys are the key set: published once each, no half rotation of the loser.
      const won = (await (answers.find((res) => res.status === 200) as Response).json()) as RotationAnswer;
      await first.services.signingKeyRotation.ring.reload();
      const kids = await jwksKids(first);
      expect(kids).toHaveLength(4);
      expect(kids).toEqual(expect.arrayContaining(won.rotated.map((key) => key.kid)));

      // Many at once: each rotation is stored whole or not at all, so every chain grows by the
      // number of 200s, never by a key of a rotation that answered 409.
      const burst = await Promise.all([first, second, first, second, first, second].map((service) => rotate(service)));
      const done = burst.filter((res) => res.status === 200).length;
      expect(burst.every((res) => res.status === 200 || res.status === 409)).toBe(true);
      expect(done).toBeGreaterThanOrEqual(1);
      const chains = await readKeyChains(first.ctx.mongo, first.config, first.services.signingKeyRotation.encryptionKey);
      expect(chains.map((chain) => [chain.alg, chain.keys.length])).toEqual([
        ['RS256', 2 + done],
        ['ES256', 2 + done],
      ]);
    });
  });

  test('when a process meets a token of a key it has not read yet, then it reads the keys again and accepts it', async () => {
    const shared = deployment('rotation-unknown-kid');
    const rotating = await startTestService('rotation-unknown-a', shared);
    // Its periodic read is an hour away and, on a queue prefix of its own, it hears no change
    // notice (as when one is lost): only the token's unknown kid makes it read.
    const other = await startTestService('rotation-unknown-b', { ...shared, SIGNING_KEY_RELOAD_SECONDS: '3600' });
    try {
      const app = await newApp(rotating);
      expect(await enterpriseStatus(other, await clientToken(other, app))).toBe(404);
      const res = await rotate(rotating, '?retireAtOnce=true');
      expect(res.status).toBe(200);
      const token = await clientToken(rotating, app);
      expect(kidOf(token)).toBe(((await res.json()) as RotationAnswer).rotated[0]?.kid);
      expect(await enterpriseStatus(other, token)).toBe(404);
      expect(await introspect(other, app, token)).toMatchObject({ active: true });
      expect(await jwksKids(other)).toContain(kidOf(token));
    } finally {
      await other.close();
      await rotating.close();
    }
  });

  test('when a process meets a token of a key it has not read and MongoDB is down, then the API and introspection answer 503 with Retry-After, not 401 or inactive', async () => {
    // This test stops MongoDB, so it has a MongoDB-wire server of its own.
    const mongo = await startMongoServer();
    const shared = deployment('rotation-kid-outage', { MONGODB_URI: `${mongo.url}/rotation-kid-outage` });
    const rotating = await startTestService('rotation-kid-outage-a', shared);
    const other = await startTestService('rotation-kid-outage-b', { ...shared, SIGNING_KEY_RELOAD_SECONDS: '3600' });
    try {
      const app = await newApp(rotating);
      expect(await enterpriseStatus(other, await clientToken(other, app))).toBe(404);
      expect((await rotate(rotating, '?retireAtOnce=true')).status).toBe(200);
      const token = await clientToken(rotating, app);
      await mongo.stop();
      // The token may be valid: the process cannot tell until it has read the keys, so it is not refused.
      const res = await fetch(`${other.url}/v1/svc-otp/00000000-0000-4000-8000-000000000000`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect({ status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
      // Within the 5 s budget of unknown-kid reads too.
      expect(await enterpriseStatus(other, token)).toBe(503);
      const introspection = await postToAuthServer(other, '/oauth/introspect', app, { token });
      expect({ status: introspection.status, retryAfter: introspection.headers.get('retry-after') }).toEqual({
        status: 503,
        retryAfter: '5',
      });
      expect(await introspection.json()).toMatchObject({ error: 'temporarily_unavailable' });
    } finally {
      await other.close();
      await rotating.close();
      await mongo.stop();
    }
  });

  test('when a rotated key starts signing while MongoDB is down, then the process builds its authorization server with the keys it holds and goes on answering', async () => {
    const mongo = await startMongoServer();
    const service = await startTestService(
      'rotation-flip-outage',
      deployment('rotation-flip-outage', { MONGODB_URI: `${mongo.url}/rotation-flip-outage`, SIGNING_KEY_RELOAD_SECONDS: '1' }),
    );
    try {
      const res = await rotate(service);
      expect(res.status).toBe(200);
      const rotation = (await res.json()) as RotationAnswer;
      const kids = await jwksKids(service);
      await mongo.stop();
      // The new keys were read before the outage: starting to sign needs nothing from the store.
      await untilClockReaches(Date.parse((rotation.rotated[0] as RotationAnswer['rotated'][number]).activeFrom) + 1);
      const answers = await Promise.all(Array.from({ length: 3 }, () => fetch(`${service.url}/svc/authserver/jwks`)));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect(((await (answers[0] as Response).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort()).toEqual(
        [...kids].sort(),
      );
    } finally {
      await service.close();
      await mongo.stop();
    }
  });

  test('when the keys are rotated with retireAtOnce, then tokens of the replaced key are refused at once and the new key signs at once', async () => {
    const shared = deployment('rotation-retire', { SIGNING_KEY_RELOAD_SECONDS: '1' });
    await withTwoProcesses('rotation-retire', shared, async (first, second) => {
      const app = await newApp(first);
      const leaked = await clientToken(first, app);
      expect(await enterpriseStatus(second, leaked)).toBe(404);
      // The metric of the key's age: the first key started signing when it was made, before now.
      const startedBefore = await signingKeyStartTime(first);
      expect(startedBefore).toBeLessThanOrEqual(Date.now() / 1000);
      const res = await rotate(first, '?retireAtOnce=true&comments=leaked');
      expect(res.status).toBe(200);
      const rotation = (await res.json()) as RotationAnswer;
      for (const key of rotation.rotated) expect(key.previousKeyRemovedAt).toBe(key.activeFrom);

      expect(await enterpriseStatus(first, leaked)).toBe(401);
      expect(await introspect(first, app, leaked)).toEqual({ active: false });
      expect(await jwksKids(first)).not.toContain(kidOf(leaked));
      expect(kidOf(await clientToken(first, app))).toBe(rotation.rotated[0]?.kid);
      // The new key starts signing at once: the metric says so.
      expect(await signingKeyStartTime(first)).toBe(Date.parse(rotation.rotated[0]?.activeFrom as string) / 1000);
      // Every other process at its next read.
      await eventually(async () => (await enterpriseStatus(second, leaked)) === 401 || undefined, 5000);
      expect(await jwksKids(second)).not.toContain(kidOf(leaked));
      expect(kidOf(await clientToken(second, app))).toBe(rotation.rotated[0]?.kid);
    });
  });

  test('when the keys are rotated with retireAtOnce, then another process of the deployment refuses the replaced key at once, long before its next periodic read', async () => {
    // One deployment: one queue prefix (the notice's channel); the periodic reads are an hour apart.
    const shared = deployment('rotation-notice', { QUEUE_PREFIX: uniqueName('rotation-notice'), SIGNING_KEY_RELOAD_SECONDS: '3600' });
    await withTwoProcesses('rotation-notice', shared, async (first, second) => {
      const app = await newApp(first);
      const leaked = await clientToken(second, app);
      expect(await enterpriseStatus(second, leaked)).toBe(404);
      expect(await introspect(second, app, leaked)).toMatchObject({ active: true });
      const res = await rotate(first, '?retireAtOnce=true');
      expect(res.status).toBe(200);
      const newKid = ((await res.json()) as RotationAnswer).rotated[0]?.kid;
      // Told through Redis: a notice and one store read, not an hour.
      await eventually(async () => (await enterpriseStatus(second, leaked)) === 401 || undefined, 3000);
      expect(await introspect(second, app, leaked)).toEqual({ active: false });
      expect(await jwksKids(second)).not.toContain(kidOf(leaked));
      expect(kidOf(await clientToken(second, app))).toBe(newKid);
    });
  });

  test('when ACCESS_TOKEN_SIGNING_ALG went back from ES256 to RS256 and the keys are rotated with retireAtOnce, then tokens of the P-256 key are refused too', async () => {
    const shared = deployment('rotation-alg-back');
    const before = await startTestService('rotation-alg-back-es', shared);
    const app = await newApp(before);
    const leaked = await clientToken(before, app);
    await before.close();
    const after = await startTestService('rotation-alg-back-rs', { ...shared, ACCESS_TOKEN_SIGNING_ALG: 'RS256' });
    try {
      // The P-256 key no longer signs, but its tokens are still accepted: it may have leaked with the others.
      expect(await enterpriseStatus(after, leaked)).toBe(404);
      const res = await rotate(after, '?retireAtOnce=true');
      expect(res.status).toBe(200);
      const rotation = (await res.json()) as RotationAnswer;
      expect(rotation.rotated.map((key) => key.previousKid)).toContain(kidOf(leaked));
      expect(await enterpriseStatus(after, leaked)).toBe(401);
      expect(await jwksKids(after)).not.toContain(kidOf(leaked));
      expect(decodeProtectedHeader(await clientToken(after, app)).alg).toBe('RS256');
    } finally {
      await after.close();
    }
  });

  test('when the activity record cannot be written after a rotation is stored, then 200 with the rotation, and the processes reading the keys record it once', async () => {
    const shared = deployment('rotation-unrecorded');
    await withTwoProcesses('rotation-unrecorded', shared, async (first, second) => {
      await Promise.all([jwksKids(first), jwksKids(second)]);
      const { activity } = first.services.repositories;
      const { appendOnce } = activity;
      // The record refuses rotation entries, the rotation's own write and this process's next read included.
      const spy = jest
        .spyOn(activity, 'appendOnce')
        .mockImplementation((id, entry, at) =>
          entry.action === 'signing-keys.rotated' ? Promise.reject(new Error('MongoDB stepped down')) : appendOnce(id, entry, at),
        );
      try {
        const res = await rotate(first, '?comments=INC-10');
        expect(res.status).toBe(200);
        const rotation = (await res.json()) as RotationAnswer;
        expect(rotation.rotated.map((key) => key.alg)).toEqual(['ES256', 'RS256']);
        expect(await jwksKids(first)).toEqual(expect.arrayContaining(rotation.rotated.map((key) => key.kid)));
        expect(await rotationEntries(first)).toEqual([]);
        expect(JSON.stringify(first.logLines())).toContain('signing keys rotated; activity entry not written');
      } finally {
        spy.mockRestore();
      }

      await readTogether(first, second);
      const entries = await rotationEntries(first);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ actor: { type: 'admin' }, comments: 'INC-10' });
      await readTogether(first, second);
      expect(await rotationEntries(first)).toHaveLength(1);
    });
  });

  test('when a process dies between storing a rotation and recording it, then the processes reading the keys record it, exactly once even when two read at once', async () => {
    const shared = deployment('rotation-audit');
    await withTwoProcesses('rotation-audit', shared, async (first, second) => {
      await Promise.all([jwksKids(first), jwksKids(second)]);
      // The rotation is stored, then its process dies before the activity record hears of it:
      // the write it was making never returns, and nothing after it runs.
      const dies = () => {
        let diedHere = () => {};
        const died = new Promise<void>((resolve) => (diedHere = resolve));
        const dead = () => {
          diedHere();
          return new Promise<never>(() => {});
        };
        return { died, dead };
      };
      const beforeEntry = dies();
      const dying: RotationStores = {
        ...first.services.signingKeyRotation,
        activity: { append: beforeEntry.dead, appendOnce: beforeEntry.dead } as unknown as RotationStores['activity'],
      };
      void rotateSigningKeys(dying, { comments: 'INC-7' });
      await beforeEntry.died;
      const chains = await readKeyChains(first.ctx.mongo, first.config, first.services.signingKeyRotation.encryptionKey);
      const made = chains.map((chain) => ({
        alg: chain.alg,
        kid: chain.keys.at(-1)?.key.kid,
        previousKid: chain.keys.at(-2)?.key.kid,
      }));
      expect(made.every((key) => key.previousKid !== undefined)).toBe(true);
      expect(await rotationEntries(first)).toEqual([]);

      await readTogether(first, second);
      const entries = await rotationEntries(first);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ actor: { type: 'admin' }, comments: 'INC-7' });
      expect(entries[0]?.signingKeys).toEqual(expect.arrayContaining(made));
      await readTogether(first, second);
      expect(await rotationEntries(first)).toHaveLength(1);

      // Dying after the entry but before the rotation says so: the readers find it there and add none.
      const afterEntry = dies();
      const forgetful: RotationStores = {
        ...first.services.signingKeyRotation,
        secrets: {
          ...first.services.signingKeyRotation.secrets,
          setServerSecretMember: afterEntry.dead,
        } as unknown as RotationStores['secrets'],
      };
      void rotateSigningKeys(forgetful, { comments: 'INC-8' });
      await afterEntry.died;
      expect((await rotationEntries(first)).map((entry) => entry.comments)).toEqual(['INC-8', 'INC-7']);
      await readTogether(first, second);
      expect((await rotationEntries(first)).map((entry) => entry.comments)).toEqual(['INC-8', 'INC-7']);
      // A rotation that did not die is recorded once too.
      expect((await rotate(first, '?comments=INC-9')).status).toBe(200);
      await readTogether(first, second);
      expect((await rotationEntries(first)).map((entry) => entry.comments)).toEqual(['INC-9', 'INC-8', 'INC-7']);
    });
  });

  test('when every key of a rotation has been removed for an hour, then the processes reading the keys delete its document, publish the same keys, and the next rotation is numbered after the newest', async () => {
    const shared = deployment('rotation-prune');
    await withTwoProcesses('rotation-prune', shared, async (first, second) => {
      await Promise.all([jwksKids(first), jwksKids(second)]);
      const stores = first.services.signingKeyRotation;
      const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3600 * 1000);
      // Routine rotations: each keeps the replaced RSA key for a sign-in session (24 h), the P-256 key for an hour.
      await rotateSigningKeys(stores, { now: hoursAgo(72) });
      await rotateSigningKeys(stores, { now: hoursAgo(48) });
      // The second one's RSA key was removed by this one less than an hour ago: its document stays.
      await rotateSigningKeys(stores, { now: hoursAgo(24.5) });
      expect(await rotationDocuments(first)).toEqual(['signing-key-rotation:1', 'signing-key-rotation:2', 'signing-key-rotation:3']);
      const chainsBefore = await readKeyChains(first.ctx.mongo, first.config, stores.encryptionKey);
      const published = signingKeysAt(chainsBefore, 'ES256', Date.now())
        .all.map((key) => key.kid)
        .sort();

      await readTogether(first, second);
      expect(await rotationDocuments(first)).toEqual(['signing-key-rotation:2', 'signing-key-rotation:3']);
      expect((await jwksKids(first)).sort()).toEqual(published);
      expect((await jwksKids(second)).sort()).toEqual(published);
      // The first keys stay: they begin the chains (a process would make new ones without them).
      const firstKeys = await createServerSecretsRepository(first.ctx.mongo).findServerSecrets([
        'access-token-signing-jwk',
        'access-token-signing-jwk-es256',
      ]);
      expect(firstKeys.size).toBe(2);

      // The next rotation takes the number after the newest, and is stored.
      const res = await rotate(second);
      expect(res.status).toBe(200);
      expect(await rotationDocuments(first)).toEqual(['signing-key-rotation:2', 'signing-key-rotation:3', 'signing-key-rotation:4']);
      const rotation = (await res.json()) as RotationAnswer;
      expect(await jwksKids(second)).toEqual(expect.arrayContaining(rotation.rotated.map((key) => key.kid)));
    });
  });

  test('when ACCESS_TOKEN_SIGNING_ALG went to RS256, was rotated, and is ES256 again, then the P-256 key the rotation made signs, not the one from before', async () => {
    const shared = deployment('rotation-alg-return', { SIGNING_KEY_RELOAD_SECONDS: '1' });
    const es = await startTestService('rotation-alg-return-es', shared);
    const app = await newApp(es);
    const before = kidOf(await clientToken(es, app));
    await es.close();
    const rs = await startTestService('rotation-alg-return-rs', { ...shared, ACCESS_TOKEN_SIGNING_ALG: 'RS256' });
    let rotation: RotationAnswer;
    try {
      const res = await rotate(rs);
      expect(res.status).toBe(200);
      rotation = (await res.json()) as RotationAnswer;
    } finally {
      await rs.close();
    }
    const p256 = rotation.rotated.find((key) => key.alg === 'ES256') as RotationAnswer['rotated'][number];
    expect(p256.previousKid).toBe(before);
    const again = await startTestService('rotation-alg-return-es2', shared);
    try {
      await untilClockReaches(Date.parse(p256.activeFrom) + 1);
      expect(kidOf(await clientToken(again, app))).toBe(p256.kid);
    } finally {
      await again.close();
    }
  });

  test('when SIGNING_KEY_JWK is set after the keys were rotated, then it signs, and the RSA keys the service made are no longer published (as its first one is not)', async () => {
    const shared = deployment('rotation-then-configured');
    const made = await startTestService('rotation-then-configured-a', shared);
    let rsaKid: string;
    try {
      const res = await rotate(made, '?retireAtOnce=true');
      expect(res.status).toBe(200);
      rsaKid = ((await res.json()) as RotationAnswer).rotated.find((key) => key.alg === 'RS256')?.kid as string;
      expect(await jwksKids(made)).toContain(rsaKid);
    } finally {
      await made.close();
    }
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'configured-later' });
    const configured = await startTestService('rotation-then-configured-b', {
      ...shared,
      SIGNING_KEY_JWK: jwk,
      ACCESS_TOKEN_SIGNING_ALG: 'RS256',
    });
    try {
      expect(kidOf(await clientToken(configured, await newApp(configured)))).toBe('configured-later');
      expect(await jwksKids(configured)).not.toContain(rsaKid);
    } finally {
      await configured.close();
    }
  });

  test('when the access-token key is SIGNING_KEY_JWK, then a rotation is 409 and nothing changes', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'configured-key' });
    const service = await startTestService(
      'rotation-configured',
      deployment('rotation-configured', { SIGNING_KEY_JWK: jwk, ACCESS_TOKEN_SIGNING_ALG: 'RS256' }),
    );
    try {
      const res = await rotate(service);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({
        message: 'The signing key is SIGNING_KEY_JWK: the service cannot rotate it; set a new SIGNING_KEY_JWK instead',
      });
      expect(await jwksKids(service)).toEqual(['configured-key']);
      expect((await rotate(service, '?retireAtOnce=yes')).status).toBe(422);
    } finally {
      await service.close();
    }
  });
});
