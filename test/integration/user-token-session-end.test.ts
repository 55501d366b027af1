import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { eventually } from '../support/otp-helpers.js';
import { authorizeUrl, exchangeCode, postToAuthServer, readMe, registerTestApp, type TestApp } from '../support/oauth-flow-helpers.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { openEventStream } from '../support/sse-client.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const SESSION_TTL_SECONDS = 300;
/** TOKEN_REVOCATION_CHECK_SECONDS here: how long an API process may trust a session it saw alive. */
const RECHECK_SECONDS = 1;

interface StoredRecord {
  kind: string;
  key: string;
  uid?: string;
  payload: { sessionUid?: string; expiresWithSession?: boolean; loginTs?: number; exp?: number };
  expiresAt?: Date;
}

/**
 * A user token issued without offline_access lives only as long as the browser session it was
 * issued in (the provider's expiresWithSession): once that session ends by its lifetime, the
 * provider's introspection calls it inactive, and /v1/me (which checks user tokens itself) must
 * refuse it too. Tokens of an offline_access grant outlive the session until their own expiry.
 */
describe('user tokens bound to the browser session', () => {
  let service: TestService;
  let worker: RunningWorker;
  let app: TestApp;
  let users = 0;

  beforeAll(async () => {
    service = await startTestService(
      'token-session-end',
      { SIGN_IN_SESSION_TTL_SECONDS: String(SESSION_TTL_SECONDS), TOKEN_REVOCATION_CHECK_SECONDS: String(RECHECK_SECONDS) },
      { ownPublicUrl: true },
    );
    // Sends the sign-in codes the forms ask for.
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await registerTestApp(service, { name: 'Session-bound app' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const records = () => service.ctx.mongo.collection<StoredRecord>('oidc_records');
  const introspect = async (token: string) => {
    const res = await postToAuthServer(service, '/oauth/introspect', app, { token });
    expect(res.status).toBe(200);
    return (await res.json()) as { active: boolean };
  };
  async function signIn(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    const userId = `bound-${++users}`;
    const mobileNumber = `+1555090${String(users).padStart(4, '0')}`;
    await insertUser(service.ctx.mongo, { userId, mobileNumber });
    const callback = await signInWithForms(service, new FormWalker(service.url), authorizeUrl(service, app, extra), userId, mobileNumber);
    return exchangeCode(service, app, callback);
  }
  /** The browser session a token was issued in, its lifetime over (as SIGN_IN_SESSION_TTL_SECONDS after a sign-in long ago). */
  async function endSessionOf(accessToken: string): Promise<void> {
    const token = await records().findOne({ kind: 'AccessToken', key: accessToken });
    const sessionUid = token?.payload.sessionUid;
    expect(sessionUid).toEqual(expect.any(String));
    const endedAt = Math.floor(Date.now() / 1000) - 1;
    const result = await records().updateOne(
      { kind: 'Session', uid: sessionUid as string },
      { $set: { 'payload.loginTs': endedAt - SESSION_TTL_SECONDS, 'payload.exp': endedAt, expiresAt: new Date(endedAt * 1000) } },
    );
    expect(result.matchedCount).toBe(1);
  }
  // As for a revoked token on the client library's routes: the documented 401 body, with the library's code for it.
  const invalidToken = (token: string) => ({ error: 'invalid_token', error_description: `Invalid access token: ${token}`, code: 39 });

  test('when the session of a token issued without offline_access ends by its lifetime, then introspection says inactive and /v1/me answers 401 invalid_token', async () => {
    const tokens = await signIn();
    const accessToken = tokens.access_token as string;
    expect((await records().findOne({ kind: 'AccessToken', key: accessToken }))?.payload.expiresWithSession).toBe(true);
    expect((await readMe(service, accessToken)).status).toBe(200);
    expect(await introspect(accessToken)).toMatchObject({ active: true });

    await endSessionOf(accessToken);

    expect(await introspect(accessToken)).toEqual({ active: false });
    // This process saw the session alive just before: it may trust that for RECHECK_SECONDS.
    const started = Date.now();
    const refused = await eventually(
      async () => {
        const res = await readMe(service, accessToken);
        return res.status === 401 ? res : undefined;
      },
      10000,
      100,
    );
    expect(Date.now() - started).toBeLessThan(RECHECK_SECONDS * 1000 + 1500);
    expect(await refused.json()).toEqual(invalidToken(accessToken));
  });

  test('when the session of a token never used on /v1/me has ended, then its first use on /v1/me or userinfo answers 401 invalid_token', async () => {
    const tokens = await signIn();
    const accessToken = tokens.access_token as string;
    await endSessionOf(accessToken);
    const res = await readMe(service, accessToken);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalidToken(accessToken));
    // UserInfo checks user tokens the same way (without the client library's code).
    const userinfo = await fetch(`${service.url}/svc/authserver/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(userinfo.status).toBe(401);
    expect(await userinfo.json()).toEqual({ error: 'invalid_token', error_description: `Invalid access token: ${accessToken}` });
  });

  test('when the session is gone from the store altogether, then the token is refused as well', async () => {
    const tokens = await signIn();
    const accessToken = tokens.access_token as string;
    const token = await records().findOne({ kind: 'AccessToken', key: accessToken });
    // Real MongoDB drops an expired session row (TTL index); mongo-java-server keeps it, so drop it here.
    expect((await records().deleteOne({ kind: 'Session', uid: token?.payload.sessionUid as string })).deletedCount).toBe(1);
    expect(await introspect(accessToken)).toEqual({ active: false });
    expect((await readMe(service, accessToken)).status).toBe(401);
  });

  test('when the session of a token issued with offline_access ends, then that token and one from its refresh token keep working', async () => {
    const tokens = await signIn({ scope: 'openid offline_access notifications', prompt: 'consent' });
    const accessToken = tokens.access_token as string;
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect((await records().findOne({ kind: 'AccessToken', key: accessToken }))?.payload.expiresWithSession).not.toBe(true);

    await endSessionOf(accessToken);

    expect(await introspect(accessToken)).toMatchObject({ active: true });
    expect((await readMe(service, accessToken)).status).toBe(200);
    const refreshed = await postToAuthServer(service, '/oauth/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
    });
    expect(refreshed.status).toBe(200);
    const fromRefresh = ((await refreshed.json()) as { access_token: string }).access_token;
    expect(await introspect(fromRefresh)).toMatchObject({ active: true });
    expect((await readMe(service, fromRefresh)).status).toBe(200);
  });

  test('when the session of an open notification stream ends, then the stream ends as for a revoked token', async () => {
    const tokens = await signIn();
    const accessToken = tokens.access_token as string;
    const events = await openEventStream(`${service.url}/v1/me/notifications/stream`, { authorization: `Bearer ${accessToken}` });
    try {
      expect(events.status).toBe(200);
      await endSessionOf(accessToken);
      // The stream checks its token again at each heartbeat (every 15 s); it then ends.
      await expect(events.next(25000)).rejects.toThrow('stream ended');
    } finally {
      events.close();
    }
  }, 40000);
});
