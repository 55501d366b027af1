import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { authorizeUrl, exchangeCode, postToAuthServer, registerTestApp, type TestApp } from '../support/oauth-flow-helpers.js';
import { eventually, readOutbox } from '../support/otp-helpers.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { SoftwareAuthenticator } from '../support/software-authenticator.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { adminRequest } from '../support/admin-requests.js';
import { dataNodes } from '../../core/platform/queues/redis-connection.js';
import { passkeyAdded, passkeyChangeChecks, passkeyRemoved } from '../../core/passkeys/passkey-activity.js';
import { removePasskey } from '../../core/passkeys/passkey-removal.js';
import { owedActivityEntry } from '../../core/users/owed-activity.js';
import { sweepOwedActivity } from '../../core/users/owed-activity-sweeper.js';
import { activityEntriesSwept } from '../../core/platform/metrics/business-metrics.js';
import { recordRefusesWritesAbout } from '../support/record-failures.js';

interface Options {
  challenge: string;
  rp: { id: string; name: string };
  user: { id: string; name: string; displayName: string };
  excludeCredentials: { id: string }[];
  authenticatorSelection: Record<string, unknown>;
  attestation: string;
}

/**
 * Registering, listing and removing passkeys through /v1/me/passkeys with a user's token, with
 * answers made by a software authenticator: what is checked (challenge once and for this user,
 * origin, relying party, user verification) and what each refusal says.
 */
describe('passkeys: registration, list and removal by the user', () => {
  let service: TestService;
  let worker: RunningWorker;
  let app: TestApp;
  let origin = '';

  beforeAll(async () => {
    service = await startTestService('passkeys-reg', {}, { ownPublicUrl: true });
    origin = new URL(service.url).origin;
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await registerTestApp(service, { name: 'Bank' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  async function tokenOf(userId: string, mobileNumber: string, through: TestApp = app, emailId?: string): Promise<string> {
    await insertUser(service.ctx.mongo, { userId, firstName: 'Pat', lastName: 'Key', mobileNumber, ...(emailId ? { emailId } : {}) });
    const walker = new FormWalker(service.url);
    const callback = await signInWithForms(service, walker, authorizeUrl(service, through), userId, mobileNumber);
    return (await exchangeCode(service, through, callback)).access_token as string;
  }

  const call = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const optionsFor = async (token: string): Promise<Options> => {
    const res = await call(token, 'POST', '/v1/me/passkeys/registration-options');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return (await res.json()) as Options;
  };
  const errorOf = async (res: Response) => ({ status: res.status, message: ((await res.json()) as { message: string }).message });

  test('when a signed-in user registers a passkey, then it is listed, excluded from the next options, recorded, and removable once', async () => {
    const token = await tokenOf('pk-alice', '+15550700001');
    const authenticator = new SoftwareAuthenticator(origin);
    const options = await optionsFor(token);
    expect(options).toMatchObject({
      rp: { id: '127.0.0.1' },
      user: { name: 'pk-alice', displayName: 'Pat Key' },
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });

    const created = await call(token, 'POST', '/v1/me/passkeys', { name: 'Laptop', credential: authenticator.create(options) });
    expect(created.status).toBe(201);
    const passkey = (await created.json()) as Record<string, unknown>;
    expect(passkey).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Laptop',
      credentialId: authenticator.credentials[0]?.id.toString('base64url'),
      transports: ['internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
      createdAt: expect.any(String),
    });

    const list = await call(token, 'GET', '/v1/me/passkeys');
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([passkey]);
    const next = await optionsFor(token);
    // The same user handle for every passkey of the user, and the one held already is excluded.
    expect(next.user.id).toBe(options.user.id);
    expect(next.excludeCredentials.map((c) => c.id)).toEqual([passkey.credentialId]);
    const activity = await service.ctx.mongo.collection('activity').find({ userId: 'pk-alice' }).toArray();
    expect(activity.map((a) => a.action as string)).toContain('user.passkey-added');

    expect((await call(token, 'DELETE', `/v1/me/passkeys/${String(passkey.id)}`)).status).toBe(204);
    expect(await (await call(token, 'GET', '/v1/me/passkeys')).json()).toEqual([]);
    expect(await errorOf(await call(token, 'DELETE', `/v1/me/passkeys/${String(passkey.id)}`))).toEqual({
      status: 404,
      message: 'Passkey not found',
    });
    const after = await service.ctx.mongo.collection('activity').find({ userId: 'pk-alice', action: 'user.passkey-removed' }).toArray();
    expect(after).toHaveLength(1);
  });

  test('when options are used twice, by another user, or answered from another origin or relying party or without user verification, then 422', async () => {
    const token = await tokenOf('pk-bob', '+15550700002');
    const otherToken = await tokenOf('pk-carol', '+15550700003');
    const authenticator = new SoftwareAuthenticator(origin);
    const register = (t: string, credential: unknown) => call(t, 'POST', '/v1/me/passkeys', { credential });
    const stale = 'Unknown, expired or used registration options: ask for new ones';

    const options = await optionsFor(token);
    // Another user's token cannot use these options; its attempt leaves them to their holder, whose
    // first use registers and whose second is refused.
    expect(await errorOf(await register(otherToken, authenticator.create(options)))).toEqual({ status: 422, message: stale });
    expect((await register(token, authenticator.create(options))).status).toBe(201);
    expect(await errorOf(await register(token, authenticator.create(options)))).toEqual({ status: 422, message: stale });
    // A challenge never issued.
    expect(await errorOf(await register(token, authenticator.create(options, { challenge: 'bm90LWEtY2hhbGxlbmdlLWF0LWFsbA' })))).toEqual({
      status: 422,
      message: stale,
    });

    const wrongOrigin = await errorOf(
      await register(token, authenticator.create(await optionsFor(token), { origin: 'https://evil.example' })),
    );
    expect(wrongOrigin.status).toBe(422);
    expect(wrongOrigin.message).toMatch(/^Passkey not accepted: .*origin/i);
    const wrongRp = await errorOf(await register(token, authenticator.create(await optionsFor(token), { rpId: 'evil.example' })));
    expect(wrongRp.status).toBe(422);
    expect(wrongRp.message).toMatch(/^Passkey not accepted: .*RP ID/i);
    const noUv = await errorOf(await register(token, authenticator.create(await optionsFor(token), { userVerified: false })));
    expect(noUv.status).toBe(422);
    expect(noUv.message).toMatch(/^Passkey not accepted: .*user could not be verified/i);
    // Only the passkey of the holder's first use was added.
    expect(await (await call(token, 'GET', '/v1/me/passkeys')).json()).toHaveLength(1);
    expect(await (await call(otherToken, 'GET', '/v1/me/passkeys')).json()).toEqual([]);

    // Malformed bodies are refused by the schema.
    const missing = await errorOf(await call(token, 'POST', '/v1/me/passkeys', { name: 'x' }));
    expect(missing).toEqual({ status: 422, message: "Invalid field credential: must have required property 'credential'" });
  });

  test('when a user asks for options 50 times, then Redis holds only the last 20 of them, the oldest are refused and the newest still register', async () => {
    const token = await tokenOf('pk-many', '+15550700031');
    const authenticator = new SoftwareAuthenticator(origin);
    const asked: Options[] = [];
    for (let i = 0; i < 40; i++) asked.push(await optionsFor(token));
    // Parallel calls stay bounded too.
    asked.push(...(await Promise.all(Array.from({ length: 10 }, () => optionsFor(token)))));
    // Every challenge Redis holds for the user, wherever the deployment keeps them.
    const held = async () =>
      (
        await Promise.all(
          dataNodes(service.ctx.redis).map(async (node) => {
            const keys = await node.keys(`${service.config.queuePrefix}:passkey:*`);
            const counts = await Promise.all(
              keys.map(async (key) => {
                const type = await node.type(key);
                if (type === 'hash') return Object.values(await node.hgetall(key));
                return type === 'string' ? [await node.get(key)] : [];
              }),
            );
            return counts.flat().filter((raw) => raw !== null && raw.includes('"user":"default:pk-many"')).length;
          }),
        )
      ).reduce((a, b) => a + b, 0);
    expect(await held()).toBe(20);

    const register = (options: Options) => call(token, 'POST', '/v1/me/passkeys', { credential: authenticator.create(options) });
    expect(await errorOf(await register(asked[0] as Options))).toEqual({
      status: 422,
      message: 'Unknown, expired or used registration options: ask for new ones',
    });
    expect((await register(asked[49] as Options)).status).toBe(201);
    expect(await held()).toBe(19);
  });

  test("when a user removes a passkey of another user, or an enterprise token calls, then 404 and 401, and the other user's passkey stays", async () => {
    const token = await tokenOf('pk-dave', '+15550700004');
    const otherToken = await tokenOf('pk-erin', '+15550700005');
    const options = await optionsFor(otherToken);
    const created = (await (
      await call(otherToken, 'POST', '/v1/me/passkeys', { credential: new SoftwareAuthenticator(origin).create(options) })
    ).json()) as { id: string; name: string };
    expect(created.name).toBe('Passkey');
    expect((await call(token, 'DELETE', `/v1/me/passkeys/${created.id}`)).status).toBe(404);
    expect(((await (await call(otherToken, 'GET', '/v1/me/passkeys')).json()) as unknown[]).length).toBe(1);

    const { accessToken } = await createClientWithToken(service, { scopes: ['notifications'] });
    expect((await call(accessToken, 'GET', '/v1/me/passkeys')).status).toBe(401);
    expect((await call(accessToken, 'POST', '/v1/me/passkeys/registration-options')).status).toBe(401);
  });

  test("when a third-party app's token (consented notifications) manages passkeys, then 403 and nothing is added", async () => {
    // A passkey signs in to every app of the enterprise for good: only the enterprise's own apps
    // may add one, never an app the user merely allowed to read their notifications.
    const redirectUri = 'http://127.0.0.1:9/elsewhere';
    const { client, clientSecret } = await registerClient(service.services.clients, {
      name: 'Partner',
      scopes: [],
      redirectUris: [redirectUri],
      firstParty: false,
    });
    const partner = { clientId: client.clientId, clientSecret: clientSecret as string, redirectUri };
    const token = await tokenOf('pk-gus', '+15550700007', partner);
    expect((await call(token, 'GET', '/v1/me/notifications')).status).toBe(200);

    const refusals = [
      await call(token, 'POST', '/v1/me/passkeys/registration-options'),
      await call(token, 'POST', '/v1/me/passkeys', { credential: {} }),
      await call(token, 'GET', '/v1/me/passkeys'),
      await call(token, 'DELETE', '/v1/me/passkeys/any'),
    ];
    expect(refusals.map((r) => r.status)).toEqual([403, 403, 403, 403]);
    expect(await refusals[0]?.json()).toMatchObject({
      error: 'insufficient_scope',
      error_description: "Passkeys are managed from the enterprise's own apps only",
      code: 39,
    });
    const stored = await service.ctx.mongo.collection('passkeys').countDocuments({ userId: 'pk-gus' });
    expect(stored).toBe(0);
  });

  test('when the sign-in behind the token is older than 5 minutes, then adding a passkey asks for a new sign-in (RFC 9470), which max_age gets', async () => {
    await insertUser(service.ctx.mongo, { userId: 'pk-hal', firstName: 'Pat', lastName: 'Key', mobileNumber: '+15550700008' });
    const walker = new FormWalker(service.url);
    const first = await signInWithForms(service, walker, authorizeUrl(service, app), 'pk-hal', '+15550700008');
    const token = (await exchangeCode(service, app, first)).access_token as string;
    const record = await service.ctx.mongo.collection('oidc_records').findOne({ kind: 'AccessToken', key: token });
    expect(record?.payload).toMatchObject({ extra: { auth_time: expect.any(Number) as unknown } });
    const signedIn = (record?.payload as { extra: { auth_time: number } }).extra.auth_time;
    expect(Math.abs(signedIn - Date.now() / 1000)).toBeLessThan(60);
    const started = await optionsFor(token);
    // Six minutes on: the sign-in this token and the browser's session carry is no longer recent.
    const records = service.ctx.mongo.collection('oidc_records');
    await records.updateOne({ kind: 'AccessToken', key: token }, { $set: { 'payload.extra.auth_time': signedIn - 360 } });
    await records.updateMany({ kind: 'Session', 'payload.accountId': 'default:pk-hal' }, { $set: { 'payload.loginTs': signedIn - 360 } });

    // A registration begun while the sign-in was recent still completes: the authenticator has
    // made the passkey by the time its answer arrives.
    const late = await call(token, 'POST', '/v1/me/passkeys', { credential: new SoftwareAuthenticator(origin).create(started) });
    expect(late.status).toBe(201);

    const stale = await call(token, 'POST', '/v1/me/passkeys/registration-options');
    expect(stale.status).toBe(401);
    expect(stale.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_user_authentication", error_description="Adding a passkey needs a recent sign-in: sign in again", max_age=300',
    );
    expect(await stale.json()).toEqual({
      error: 'insufficient_user_authentication',
      error_description: 'Adding a passkey needs a recent sign-in: sign in again',
      max_age: 300,
      code: 39,
    });
    expect((await call(token, 'GET', '/v1/me/passkeys')).status).toBe(200);

    // The app signs the user in again with the answer's max_age: the service asks who they are
    // even though its session cookie is still there, and the new token may add a passkey.
    const again = await signInWithForms(service, walker, authorizeUrl(service, app, { max_age: '300' }), 'pk-hal', '+15550700008');
    const fresh = (await exchangeCode(service, app, again)).access_token as string;
    const options = await optionsFor(fresh);
    const created = await call(fresh, 'POST', '/v1/me/passkeys', { credential: new SoftwareAuthenticator(origin).create(options) });
    expect(created.status).toBe(201);
  });

  test('when the sign-in behind the token is older than 10 minutes, then removing a passkey asks for a new sign-in (RFC 9470) and the passkey stays', async () => {
    const token = await tokenOf('pk-nia', '+15550700032');
    const created = await call(token, 'POST', '/v1/me/passkeys', {
      name: 'Phone',
      credential: new SoftwareAuthenticator(origin).create(await optionsFor(token)),
    });
    const { id } = (await created.json()) as { id: string };
    const records = service.ctx.mongo.collection('oidc_records');
    const signedIn = ((await records.findOne({ kind: 'AccessToken', key: token }))?.payload as { extra: { auth_time: number } }).extra
      .auth_time;
    const signedInAgo = (seconds: number) =>
      records.updateOne({ kind: 'AccessToken', key: token }, { $set: { 'payload.extra.auth_time': signedIn - seconds } });

    // Eleven minutes on: a token taken from a page left open cannot remove the user's passkeys.
    await signedInAgo(660);
    const stale = await call(token, 'DELETE', `/v1/me/passkeys/${id}`);
    expect(stale.status).toBe(401);
    expect(stale.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_user_authentication", error_description="Removing a passkey needs a recent sign-in: sign in again", max_age=600',
    );
    expect(await stale.json()).toEqual({
      error: 'insufficient_user_authentication',
      error_description: 'Removing a passkey needs a recent sign-in: sign in again',
      max_age: 600,
      code: 39,
    });
    expect(((await (await call(token, 'GET', '/v1/me/passkeys')).json()) as { id: string }[]).map((p) => p.id)).toEqual([id]);
    expect(await service.ctx.mongo.collection('activity').countDocuments({ userId: 'pk-nia', action: 'user.passkey-removed' })).toBe(0);

    // Nine minutes on, it is recent enough.
    await signedInAgo(540);
    expect((await call(token, 'DELETE', `/v1/me/passkeys/${id}`)).status).toBe(204);
  });

  test('when a token is refreshed, then it keeps the time of the sign-in, so refreshing never makes a sign-in recent', async () => {
    await insertUser(service.ctx.mongo, { userId: 'pk-ida', firstName: 'Pat', lastName: 'Key', mobileNumber: '+15550700009' });
    const offline = authorizeUrl(service, app, { scope: 'openid offline_access notifications', prompt: 'consent' });
    const callback = await signInWithForms(service, new FormWalker(service.url), offline, 'pk-ida', '+15550700009');
    const tokens = await exchangeCode(service, app, callback);
    const records = service.ctx.mongo.collection('oidc_records');
    const authTimeOf = async (token: unknown) =>
      ((await records.findOne({ kind: 'AccessToken', key: token }))?.payload as { extra?: { auth_time?: number } }).extra?.auth_time;
    const signedIn = await authTimeOf(tokens.access_token);
    expect(signedIn).toEqual(expect.any(Number));
    const refreshed = await postToAuthServer(service, '/oauth/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as { access_token: string };
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(await authTimeOf(next.access_token)).toBe(signedIn);
  });

  test('when the same credential is sent twice with fresh options, then the second is 409', async () => {
    const token = await tokenOf('pk-fay', '+15550700006');
    const authenticator = new SoftwareAuthenticator(origin);
    const first = authenticator.create(await optionsFor(token));
    expect((await call(token, 'POST', '/v1/me/passkeys', { credential: first })).status).toBe(201);
    // The same attestation again, answering new options: the credential id is taken.
    const options = await optionsFor(token);
    const again = authenticator.create(options);
    const replay = {
      ...first,
      response: { ...(first.response as object), clientDataJSON: (again.response as { clientDataJSON: string }).clientDataJSON },
    };
    const res = await call(token, 'POST', '/v1/me/passkeys', { credential: replay });
    expect(await errorOf(res)).toEqual({ status: 409, message: 'This passkey is already registered' });
    // Only the passkey that was added is told of.
    expect(await service.ctx.mongo.collection('deliveries').countDocuments({ kind: 'notice', refId: 'pk-fay' })).toBe(1);
    // And recorded: the refused one owes the record nothing.
    expect(await service.ctx.mongo.collection('activity').countDocuments({ userId: 'pk-fay', action: 'user.passkey-added' })).toBe(1);
    expect(await service.services.repositories.users.findOwedActivity({ enterpriseId: 'default', userId: 'pk-fay' })).toEqual([]);
  });

  test('when a user near the cap of 20 registers several passkeys at once, then no more than 20 are kept and the others are refused', async () => {
    const token = await tokenOf('pk-cap', '+15550700019');
    const stored = Array.from({ length: 18 }, (_, i) => ({
      id: `pk-cap-stored-${i}`,
      enterpriseId: 'default',
      userId: 'pk-cap',
      credentialId: `pk-cap-credential-${i}`,
      publicKey: 'AQID',
      counter: 0,
      userHandle: 'pk-cap-handle',
      transports: [],
      name: `Stored ${i}`,
      aaguid: '00000000-0000-0000-0000-000000000000',
      deviceType: 'singleDevice',
      backedUp: false,
      createdAt: new Date(Date.now() - 60_000 + i),
    }));
    await service.ctx.mongo.collection('passkeys').insertMany(stored);
    const authenticator = new SoftwareAuthenticator(origin);
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(authenticator.create(await optionsFor(token)));
    // All at once: each checks the cap while the others are being stored.
    const results = await Promise.all(answers.map((credential) => call(token, 'POST', '/v1/me/passkeys', { credential })));
    const refused = await Promise.all(results.filter((res) => res.status !== 201).map(errorOf));
    expect(refused.length).toBeGreaterThanOrEqual(18);
    for (const refusal of refused)
      expect(refusal).toEqual({ status: 422, message: 'A user may have at most 20 passkeys: remove one first' });
    expect(await service.ctx.mongo.collection('passkeys').countDocuments({ userId: 'pk-cap' })).toBeLessThanOrEqual(20);
    // Only the passkeys kept are told of.
    const kept = (await service.ctx.mongo.collection('passkeys').countDocuments({ userId: 'pk-cap' })) - 18;
    expect(await service.ctx.mongo.collection('deliveries').countDocuments({ kind: 'notice', refId: 'pk-cap' })).toBe(kept);
    expect(await service.ctx.mongo.collection('activity').countDocuments({ userId: 'pk-cap', action: 'user.passkey-added' })).toBe(kept);
    expect(await service.services.repositories.users.findOwedActivity({ enterpriseId: 'default', userId: 'pk-cap' })).toEqual([]);
  });

  test('when a passkey name holds a line break, a control character or a direction mark, then 422 before the options are used, and an emoji name is kept', async () => {
    const token = await tokenOf('pk-kim', '+15550700012');
    const options = await optionsFor(token);
    const credential = new SoftwareAuthenticator(origin).create(options);
    const refusal = {
      status: 422,
      message: 'Invalid field name: must not hold line breaks, control characters or text direction marks',
    };
    for (const name of ['Phone\nAll is fine, no action needed', 'Tab\there', 'Key \u202Eenohp', 'Pat\u2028phone']) {
      expect(await errorOf(await call(token, 'POST', '/v1/me/passkeys', { name, credential }))).toEqual(refusal);
    }
    // The refusals left the options unused: the same answer with a good name registers.
    const added = await call(token, 'POST', '/v1/me/passkeys', { name: 'Pat’s 👩‍💻 laptop', credential });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ name: 'Pat’s 👩‍💻 laptop' });
  });

  test('when a passkey is added, then the user is told by e-mail, naming it and the time, and a user without an address by SMS', async () => {
    const email = 'pk-ivy@example.test';
    const withEmail = await tokenOf('pk-ivy', '+15550700010', app, email);
    const added = await call(withEmail, 'POST', '/v1/me/passkeys', {
      name: 'Pat <b>phone</b>',
      credential: new SoftwareAuthenticator(origin).create(await optionsFor(withEmail)),
    });
    expect(added.status).toBe(201);
    const { createdAt } = (await added.json()) as { createdAt: string };
    const mail = await eventually(async () => (await readOutbox(service, email)).at(0));
    expect(mail).toMatchObject({ channel: 'EMAIL', subject: 'A passkey was added to your account' });
    const at = `${createdAt.slice(0, 16).replace('T', ' ')} UTC`;
    expect(mail.text).toContain(`Hello Pat,\n\na passkey named "Pat <b>phone</b>" was added to your account at ${at}.`);
    expect(mail.html).toContain('a passkey named <strong>Pat &lt;b&gt;phone&lt;/b&gt;</strong>');
    expect(mail.html).toContain('tell your administrator now');

    const mobile = '+15550700011';
    const smsOnly = await tokenOf('pk-jon', mobile);
    const credential = new SoftwareAuthenticator(origin).create(await optionsFor(smsOnly));
    expect((await call(smsOnly, 'POST', '/v1/me/passkeys', { credential })).status).toBe(201);
    const sms = await eventually(async () => (await readOutbox(service, mobile)).find((m) => m.text.includes('passkey')));
    expect(sms.channel).toBe('SMS');
    expect(sms.text).toMatch(
      /^Hello Pat, a passkey named "Passkey" was added to your account at .+ UTC\. If it was not you, tell your administrator now\.$/,
    );
  });
  test('when a passkey is removed, by the user or by an admin, then the user is told, naming it and the time, and a repeated removal tells nobody', async () => {
    const email = 'pk-lou@example.test';
    const token = await tokenOf('pk-lou', '+15550700013', app, email);
    const addOne = async (name: string) => {
      const res = await call(token, 'POST', '/v1/me/passkeys', {
        name,
        credential: new SoftwareAuthenticator(origin).create(await optionsFor(token)),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const mine = await addOne('Old phone');
    const admins = await addOne('Lost laptop');
    const removedMails = async () =>
      (await readOutbox(service, email)).filter((m) => m.subject === 'A passkey was removed from your account');

    const before = Date.now();
    expect((await call(token, 'DELETE', `/v1/me/passkeys/${mine}`)).status).toBe(204);
    const byUser = await eventually(async () => (await removedMails()).at(0));
    const at = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    expect([at(before), at(Date.now())]).toContain(/ at (\d{4}-\d\d-\d\d \d\d:\d\d UTC)\./.exec(byUser.text)?.[1]);
    expect(byUser.text).toContain('Hello Pat,\n\nthe passkey named "Old phone" was removed from your account at ');
    expect(byUser.html).toContain('the passkey named <strong>Old phone</strong> was removed');

    const removed = await adminRequest(service, 'DELETE', `/admin/users/pk-lou/passkeys/${admins}?comments=reported%20lost`);
    expect(removed.status).toBe(204);
    await eventually(async () => ((await removedMails()).length === 2 ? true : undefined));
    expect((await removedMails()).map((m) => /named "([^"]+)"/.exec(m.text)?.[1]).sort()).toEqual(['Lost laptop', 'Old phone']);

    // Removing again is a 404 and writes to nobody; an unknown user is the same 404.
    expect((await call(token, 'DELETE', `/v1/me/passkeys/${mine}`)).status).toBe(404);
    expect((await adminRequest(service, 'DELETE', `/admin/users/nobody-here/passkeys/${admins}`)).status).toBe(404);
    const mobile = '+15550700014';
    const smsOnly = await tokenOf('pk-max', mobile);
    const credential = new SoftwareAuthenticator(origin).create(await optionsFor(smsOnly));
    const smsKey = ((await (await call(smsOnly, 'POST', '/v1/me/passkeys', { credential })).json()) as { id: string }).id;
    expect((await call(smsOnly, 'DELETE', `/v1/me/passkeys/${smsKey}`)).status).toBe(204);
    const sms = await eventually(async () => (await readOutbox(service, mobile)).find((m) => m.text.includes('was removed')));
    expect(sms.text).toMatch(
      /^Hello Pat, the passkey named "Passkey" was removed from your account at .+ UTC\. If it was not you or your administrator, tell your administrator now\.$/,
    );
    expect((await removedMails()).length).toBe(2);
  });
  test('when the activity record cannot be written after a passkey is added or removed, by the user or an admin, then the answers are the successes and each entry appears exactly once after the sweep', async () => {
    const userId = 'pk-rec';
    const email = 'pk-rec@example.test';
    const token = await tokenOf(userId, '+15550700021', app, email);
    const recorded = async () =>
      (await adminRequest(service, 'GET', `/admin/activity?enterpriseId=default&userId=${userId}`).then((r) => r.json())) as {
        activity: Record<string, unknown>[];
      };
    const restore = recordRefusesWritesAbout(service.services.repositories.activity, userId);
    const ids: string[] = [];
    try {
      for (const name of ['Phone', 'Tablet']) {
        const res = await call(token, 'POST', '/v1/me/passkeys', {
          name,
          credential: new SoftwareAuthenticator(origin).create(await optionsFor(token)),
        });
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as { id: string }).id);
      }
      expect((await call(token, 'DELETE', `/v1/me/passkeys/${ids[0]}`)).status).toBe(204);
      expect((await adminRequest(service, 'DELETE', `/admin/users/${userId}/passkeys/${ids[1]}?comments=reported%20lost`)).status).toBe(
        204,
      );
      // Removed again: 404, and nothing more is owed.
      expect((await call(token, 'DELETE', `/v1/me/passkeys/${ids[0]}`)).status).toBe(404);
      expect((await adminRequest(service, 'DELETE', `/admin/users/${userId}/passkeys/${ids[1]}`)).status).toBe(404);
    } finally {
      restore();
    }
    // The user is still told of each change.
    await eventually(async () => ((await readOutbox(service, email)).length === 4 ? true : undefined));
    expect((await recorded()).activity.filter((e) => String(e.action).startsWith('user.passkey'))).toEqual([]);

    const { repositories } = service.services;
    const sweepDeps = {
      ...repositories,
      changeChecks: passkeyChangeChecks(repositories.passkeys),
      logger: memoryLogger().logger,
      graceMs: service.config.sweeperGraceMs,
    };
    const afterGrace = new Date(Date.now() + service.config.sweeperGraceMs + 1000);
    for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps, afterGrace);
    const entries = (await recorded()).activity
      .filter((e) => String(e.action).startsWith('user.passkey'))
      .map((e) => [e.action, e.actor, e.clientId, e.comments]);
    expect(entries).toEqual([
      ['user.passkey-removed', { type: 'admin' }, undefined, `passkey ${ids[1]}: reported lost`],
      ['user.passkey-removed', { type: 'user' }, undefined, `passkey ${ids[0]}`],
      ['user.passkey-added', { type: 'user' }, app.clientId, `passkey ${ids[1]} (Tablet)`],
      ['user.passkey-added', { type: 'user' }, app.clientId, `passkey ${ids[0]} (Phone)`],
    ]);
    expect(await repositories.users.findOwedActivity({ enterpriseId: 'default', userId })).toEqual([]);
  });
  test('when a process died between storing a passkey entry ahead and settling it, then the sweep records the changes that were made, once, and drops the others', async () => {
    const userId = 'pk-died';
    const ref = { enterpriseId: 'default', userId };
    await tokenOf(userId, '+15550700022');
    const { users, passkeys, activity } = service.services.repositories;
    const newPasskey = (n: number) => ({
      ...ref,
      credentialId: `pk-died-credential-${n}`,
      publicKey: 'AQID',
      counter: 0,
      userHandle: 'pk-died-handle',
      transports: [],
      name: `Died ${n}`,
      aaguid: '00000000-0000-0000-0000-000000000000',
      deviceType: 'singleDevice' as const,
      backedUp: false,
    });
    const at = new Date();
    const ahead = (action: 'user.passkey-added' | 'user.passkey-removed', passkeyId: string) =>
      owedActivityEntry(action, { type: 'user' }, at, `passkey ${passkeyId}`, {
        ahead: (action === 'user.passkey-added' ? passkeyAdded : passkeyRemoved)(passkeyId),
      });
    // Added, then the process died: the passkey is stored, its entry still ahead.
    const stored = await passkeys.add(newPasskey(1), at, 'pk-died-stored');
    // The process died before the passkey's write: nothing to record.
    const never = 'pk-died-never';
    // A removal that died before its delete: the passkey stays, nothing to record.
    const kept = await passkeys.add(newPasskey(2), at, 'pk-died-kept');
    // An add that died, then removed by the user: both are recorded.
    const gone = await passkeys.add(newPasskey(3), at, 'pk-died-gone');
    const entries = [
      ahead('user.passkey-added', stored.id),
      ahead('user.passkey-added', never),
      ahead('user.passkey-removed', kept.id),
      ahead('user.passkey-added', gone.id),
    ];
    await users.oweActivity(ref, entries);
    const user = await users.findUser(ref);
    if (!user) throw new Error('no user');
    await removePasskey(
      { users, activity, logger: memoryLogger().logger, passkeys, changeNotice: { send: async () => {} } },
      user,
      gone.id,
      { type: 'user' },
    );

    const sweepDeps = {
      users,
      activity,
      changeChecks: passkeyChangeChecks(passkeys),
      logger: memoryLogger().logger,
      graceMs: service.config.sweeperGraceMs,
    };
    const afterGrace = new Date(Date.now() + service.config.sweeperGraceMs + 1000);
    // An addition still under way when the sweep takes the user for the entries above (its entry is
    // younger than the grace period, its passkey not stored yet): left for a later sweep.
    const late = owedActivityEntry('user.passkey-added', { type: 'user' }, new Date(afterGrace.getTime() - 1000), 'passkey late', {
      ahead: passkeyAdded('pk-died-late'),
    });
    await users.oweActivity(ref, [late]);
    const dropped = async () => (await activityEntriesSwept.get()).values.find((v) => v.labels.outcome === 'dropped')?.value ?? 0;
    const droppedBefore = await dropped();
    for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps, afterGrace);
    // The addition never made and the removal that died before its delete are counted as dropped.
    expect((await dropped()) - droppedBefore).toBe(2);
    expect((await users.findOwedActivity(ref)).map((e) => e.id)).toEqual([late.id]);
    await passkeys.add(newPasskey(4), at, 'pk-died-late');
    await sweepOwedActivity(sweepDeps, new Date(afterGrace.getTime() + 2 * service.config.sweeperGraceMs));
    const recorded = await service.ctx.mongo
      .collection('activity')
      .find({ userId, action: { $in: ['user.passkey-added', 'user.passkey-removed'] } })
      .toArray();
    expect(recorded.map((e) => [e.action, e.comments]).sort()).toEqual(
      [
        ['user.passkey-added', `passkey ${stored.id}`],
        ['user.passkey-added', `passkey ${gone.id}`],
        ['user.passkey-removed', `passkey ${gone.id}`],
        ['user.passkey-added', 'passkey late'],
      ].sort(),
    );
    expect(await users.findOwedActivity(ref)).toEqual([]);
    expect(await passkeys.exists(ref, kept.id)).toBe(true);
  });
});
