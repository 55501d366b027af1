import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const REDIRECT = 'https://app.example/callback';
const SESSION_TTL_SECONDS = 300;

/** The browser session a sign-in leaves behind lives SIGN_IN_SESSION_TTL_SECONDS from that sign-in, however often apps use it. */
describe('sign-in session lifetime', () => {
  let service: TestService;
  let worker: RunningWorker;
  let clientId: string;

  beforeAll(async () => {
    service = await startTestService(
      'signin-session-life',
      { SIGN_IN_SESSION_TTL_SECONDS: String(SESSION_TTL_SECONDS) },
      { ownPublicUrl: true },
    );
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    clientId = (await registerClient(service.services.clients, { name: 'Acme', scopes: [], redirectUris: [REDIRECT] })).client.clientId;
    await insertUser(service.ctx.mongo, { userId: 'lena', mobileNumber: '+15550800001' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const authorizeUrl = (extra: Record<string, string> = {}) =>
    `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid notifications',
      redirect_uri: REDIRECT,
      state: 'st',
      ...extra,
    }).toString()}`;

  const sessions = () =>
    service.ctx.mongo.collection<{ kind: string; payload: { loginTs?: number; exp?: number }; expiresAt?: Date }>('oidc_records');

  test('when apps keep using the session, then it still ends SIGN_IN_SESSION_TTL_SECONDS after the sign-in (an absolute lifetime, not an idle one)', async () => {
    const walker = new FormWalker(service.url);
    await signInWithForms(service, walker, authorizeUrl(), 'lena', '+15550800001');
    const stored = await sessions().findOne({ kind: 'Session', 'payload.accountId': { $exists: true } });
    expect(stored?.payload.loginTs).toEqual(expect.any(Number));
    // The sign-in as if made 250 s ago, its session stored as it was then: 50 s of it are left.
    const signedInAt = Math.floor(Date.now() / 1000) - 250;
    const endsAt = signedInAt + SESSION_TTL_SECONDS;
    await sessions().updateOne(
      { kind: 'Session', 'payload.accountId': { $exists: true } },
      { $set: { 'payload.loginTs': signedInAt, 'payload.exp': endsAt, expiresAt: new Date(endsAt * 1000) } },
    );

    // An app asks again without a page (prompt=none): the session is still good, and used.
    const back = new URL(await walker.leaves(authorizeUrl({ prompt: 'none' })));
    expect(back.searchParams.get('code')).toEqual(expect.any(String));

    const after = await sessions().findOne({ kind: 'Session', 'payload.accountId': { $exists: true } });
    expect(after?.payload.exp).toBeLessThanOrEqual(endsAt);
    // The store's expiry is the TTL in whole seconds from the moment of the write.
    expect(after?.expiresAt?.getTime()).toBeLessThan((endsAt + 1) * 1000);
  });

  test('when whoever holds the session cookie keeps using it more than once a second across its end, then it still ends SIGN_IN_SESSION_TTL_SECONDS after the sign-in', async () => {
    await insertUser(service.ctx.mongo, { userId: 'mira', mobileNumber: '+15550800002' });
    const walker = new FormWalker(service.url);
    await signInWithForms(service, walker, authorizeUrl(), 'mira', '+15550800002');
    // The sign-in as if made long ago: 2 s of its lifetime are left.
    const endsAt = Math.floor(Date.now() / 1000) + 2;
    const signedInAt = endsAt - SESSION_TTL_SECONDS;
    await sessions().updateOne(
      { kind: 'Session', 'payload.accountId': { $regex: ':mira$' } },
      { $set: { 'payload.loginTs': signedInAt, 'payload.exp': endsAt, expiresAt: new Date(endsAt * 1000) } },
    );

    // Silent sign-ins back to back (each saves the session again) until 3 s after its end.
    const answers: { at: number; code: boolean }[] = [];
    while (Date.now() < (endsAt + 3) * 1000) {
      const at = Date.now();
      const back = new URL(await walker.leaves(authorizeUrl({ prompt: 'none' })));
      answers.push({ at, code: back.searchParams.has('code') });
    }
    expect(answers.filter((answer) => answer.at < (endsAt - 1) * 1000).every((answer) => answer.code)).toBe(true);
    // A second of margin past the end for the clock's rounding: from then on, only login_required.
    const afterEnd = answers.filter((answer) => answer.at >= (endsAt + 1) * 1000);
    expect(afterEnd.length).toBeGreaterThan(0);
    expect(afterEnd.filter((answer) => answer.code)).toEqual([]);
  });
});
