import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { authorizeUrl, exchangeCode, readMe, registerTestApp, type TestApp } from '../support/oauth-flow-helpers.js';
import { csrfOf, FormWalker, signInWithForms, type Page } from '../support/sign-in-helpers.js';
import { SoftwareAuthenticator } from '../support/software-authenticator.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * A user with one passkey on an authenticator of `authenticatorOrigin` (the page that registered
 * it), registered with a token from a code sign-in through `app`.
 */
async function userWithPasskeyFrom(service: TestService, app: TestApp, authenticatorOrigin: string, userId: string, mobileNumber: string) {
  await insertUser(service.ctx.mongo, { userId, mobileNumber });
  const callback = await signInWithForms(service, new FormWalker(service.url), authorizeUrl(service, app), userId, mobileNumber);
  const token = (await exchangeCode(service, app, callback)).access_token as string;
  const auth = { authorization: `Bearer ${token}` };
  const options = (await (await fetch(`${service.url}/v1/me/passkeys/registration-options`, { method: 'POST', headers: auth })).json()) as {
    challenge: string;
    rp: { id: string };
    user: { id: string };
  };
  const authenticator = new SoftwareAuthenticator(authenticatorOrigin);
  const res = await fetch(`${service.url}/v1/me/passkeys`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ credential: authenticator.create(options) }),
  });
  expect(res.status).toBe(201);
  const passkey = (await res.json()) as { id: string };
  return { authenticator, passkeyId: passkey.id };
}

/**
 * Signing in with a passkey on the login page, as a browser would post it (the page's script
 * turns the authenticator's answer into a form post): the page's challenge, checked once; the
 * passkey of the app's enterprise only; removed passkeys, blocked users, other origins and a
 * sign counter that went back are refused.
 */
describe('passkeys: sign-in on the login page', () => {
  let service: TestService;
  let worker: RunningWorker;
  let app: TestApp;
  let otherApp: TestApp;
  let origin = '';

  beforeAll(async () => {
    service = await startTestService('passkeys-signin', {}, { ownPublicUrl: true });
    origin = new URL(service.url).origin;
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await registerTestApp(service, { name: 'Bank' });
    otherApp = await registerTestApp(service, { name: 'Other', enterpriseId: 'other-co' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const userWithPasskey = (userId: string, mobileNumber: string) => userWithPasskeyFrom(service, app, origin, userId, mobileNumber);

  const challengeOf = (page: Page) => {
    const match = /data-challenge="([A-Za-z0-9_-]+)" data-rp-id="([^"]+)"/.exec(page.html);
    if (!match) throw new Error(`no passkey offer on the page: ${page.html.slice(0, 300)}`);
    return { challenge: match[1] as string, rpId: match[2] as string };
  };
  const postAnswer = (walker: FormWalker, page: Page, answer: unknown) =>
    walker.request(page.url, { form: { csrf: csrfOf(page.html), step: 'passkey', credential: JSON.stringify(answer) } });
  const errorOn = (result: Page | { redirectedTo: string }) => {
    if ('redirectedTo' in result) throw new Error(`left for ${result.redirectedTo}`);
    return { status: result.status, error: /<p class="error" role="alert">([^<]*)<\/p>/.exec(result.html)?.[1], html: result.html };
  };

  test('when the page is answered with the passkey, then the app gets a code for that user; the page offers a new challenge each time and script runs by nonce only', async () => {
    const { authenticator } = await userWithPasskey('pk-ann', '+15550710001');
    const walker = new FormWalker(service.url);
    const page = await walker.page(authorizeUrl(service, app));
    const offer = challengeOf(page);
    expect(offer.rpId).toBe('127.0.0.1');
    expect(page.html).toContain('autocomplete="username webauthn"');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+'; style-src/);
    expect(page.headers.get('content-security-policy')).not.toContain('connect-src');
    const again = await walker.page(page.url);
    expect(challengeOf(again).challenge).not.toBe(offer.challenge);

    // The first page's challenge was replaced when the page was shown again.
    expect(errorOn(await postAnswer(walker, again, authenticator.get(offer.challenge)))).toMatchObject({
      status: 400,
      error: 'That passkey could not be verified. Try again, or continue with your user id.',
    });
    const fresh = await walker.page(page.url);
    const callback = await postAnswer(walker, fresh, authenticator.get(challengeOf(fresh).challenge));
    if (!('redirectedTo' in callback)) throw new Error(`not signed in: ${callback.status} ${callback.html.slice(0, 400)}`);
    const tokens = await exchangeCode(service, app, callback.redirectedTo);
    expect(((await (await readMe(service, tokens.access_token as string)).json()) as { userId: string }).userId).toBe('pk-ann');
    const stored = await service.ctx.mongo.collection('passkeys').findOne({ userId: 'pk-ann' });
    expect(stored?.counter).toBe(2);
    expect(stored?.lastUsedAt).toBeInstanceOf(Date);
  });

  test('when an answer is posted twice, then the second answers a challenge that is gone; a malformed answer is refused', async () => {
    const { authenticator } = await userWithPasskey('pk-ben', '+15550710002');
    const walker = new FormWalker(service.url);
    const page = await walker.page(authorizeUrl(service, app));
    const answer = authenticator.get(challengeOf(page).challenge, { origin: 'https://evil.example' });
    expect(errorOn(await postAnswer(walker, page, answer))).toMatchObject({
      status: 400,
      error: 'That passkey could not be verified. Try again, or continue with your user id.',
    });
    // The page shown with the error carries a new challenge; the old one never comes back.
    expect(errorOn(await postAnswer(walker, page, authenticator.get(challengeOf(page).challenge)))).toMatchObject({
      status: 400,
      error: 'That passkey could not be verified. Try again, or continue with your user id.',
    });
    expect(
      errorOn(await walker.request(page.url, { form: { csrf: csrfOf(page.html), step: 'passkey', credential: '{"id":1}' } })),
    ).toMatchObject({
      status: 400,
      error: 'The passkey answer was incomplete. Please try again.',
    });
  });

  test('when the page is answered more than 6 minutes after it was shown, then the challenge is out of date; within 6 minutes it signs in', async () => {
    const { authenticator } = await userWithPasskey('pk-eve', '+15550710007');
    const walker = new FormWalker(service.url);
    const page = await walker.page(authorizeUrl(service, app));
    const uid = new URL(page.url).pathname.split('/').pop();
    // The browser is asked to give up after 5 minutes; a minute more is allowed for the way back.
    const shownAgo = async (ms: number) =>
      service.ctx.mongo.collection('login_states').updateOne({ uid }, { $set: { passkeyChallengeIssuedAt: new Date(Date.now() - ms) } });
    await shownAgo(6 * 60 * 1000 + 1000);
    expect(errorOn(await postAnswer(walker, page, authenticator.get(challengeOf(page).challenge)))).toMatchObject({
      status: 400,
      error: 'That passkey sign-in is out of date. Please try again.',
    });

    const fresh = await walker.page(page.url);
    await shownAgo(6 * 60 * 1000 - 5000);
    expect(await postAnswer(walker, fresh, authenticator.get(challengeOf(fresh).challenge))).toHaveProperty('redirectedTo');
  });

  test('when the passkey was removed, belongs to another enterprise, answers without user verification or with a counter that went back, then sign-in is refused', async () => {
    const { authenticator, passkeyId } = await userWithPasskey('pk-cat', '+15550710003');
    // Each attempt from a browser of its own, so a sign-in leaves no session behind for the next.
    const attempt = async (answerFor: (challenge: string) => unknown, target = app) => {
      const walker = new FormWalker(service.url);
      const page = await walker.page(authorizeUrl(service, target));
      return postAnswer(walker, page, answerFor(challengeOf(page).challenge));
    };
    const notVerified = { status: 400, error: 'That passkey could not be verified. Try again, or continue with your user id.' };

    expect(errorOn(await attempt((c) => authenticator.get(c, { userVerified: false })))).toMatchObject(notVerified);
    // Signed in once, the counter stands at 5; an answer that counts lower may come from a copy.
    expect(await attempt((c) => authenticator.get(c, { counter: 5 }))).toHaveProperty('redirectedTo');
    expect(errorOn(await attempt((c) => authenticator.get(c, { counter: 3 })))).toMatchObject(notVerified);
    expect(service.logLines().some((line) => line.msg === 'passkey sign counter went back: refused')).toBe(true);
    expect(errorOn(await attempt((c) => authenticator.get(c), otherApp))).toMatchObject({
      status: 400,
      error: 'This passkey is not registered for this app. Use another passkey, or continue with your user id.',
    });

    const removed = await fetch(`${service.url}/admin/users/pk-cat/passkeys/${passkeyId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(removed.status).toBe(204);
    expect(errorOn(await attempt((c) => authenticator.get(c)))).toMatchObject({
      status: 400,
      error: 'This passkey is not registered for this app. Use another passkey, or continue with your user id.',
    });
  });

  test('when an answer with a counter gone back is not signed by the passkey, then it is refused without the clone warning', async () => {
    const { authenticator, passkeyId } = await userWithPasskey('pk-fox', '+15550710006');
    const attempt = async (answerFor: (challenge: string) => Record<string, unknown>) => {
      const walker = new FormWalker(service.url);
      const page = await walker.page(authorizeUrl(service, app));
      return postAnswer(walker, page, answerFor(challengeOf(page).challenge));
    };
    expect(await attempt((c) => authenticator.get(c, { counter: 5 }))).toHaveProperty('redirectedTo');
    // Someone who knows the credential id, not the key: the signature of another answer.
    const forged = (c: string) => {
      const answer = authenticator.get(c, { counter: 1 });
      const other = authenticator.get(`${c}x`, { counter: 1 });
      return { ...answer, response: { ...(answer.response as object), signature: (other.response as { signature: string }).signature } };
    };
    expect(errorOn(await attempt(forged))).toMatchObject({
      status: 400,
      error: 'That passkey could not be verified. Try again, or continue with your user id.',
    });
    const about = service.logLines().filter((line) => line.passkeyId === passkeyId);
    expect(about.some((line) => line.msg === 'passkey sign counter went back: refused')).toBe(false);
    expect(about.some((line) => line.msg === 'passkey answer did not verify')).toBe(true);
  });

  test('when the user is blocked, then the right passkey answer ends on the refusal page', async () => {
    const { authenticator } = await userWithPasskey('pk-dan', '+15550710004');
    const blocked = await fetch(`${service.url}/admin/users/pk-dan/blocked`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ blocked: true }),
    });
    expect(blocked.status).toBe(200);
    const walker = new FormWalker(service.url);
    const page = await walker.page(authorizeUrl(service, app));
    const result = errorOn(await postAnswer(walker, page, authenticator.get(challengeOf(page).challenge)));
    expect(result.status).toBe(403);
    expect(result.html).toContain('This account cannot sign in. Contact your administrator.');
  });
});

/**
 * PASSKEY_ORIGINS lists the pages that may register passkeys, apps' pages included. Only the
 * sign-in page asks for sign-in answers, so only its origin (that of PUBLIC_URL) may give one: an
 * app's page (or a script injected into it) that asked the user's authenticator for the challenge
 * of a login page someone else opened would otherwise sign that person in as the user, to every
 * app of the enterprise, and across enterprises, since the relying party is the deployment's.
 */
describe('passkeys: sign-in answers come from the sign-in page only', () => {
  const appOrigin = 'http://127.0.0.1:9443';
  let service: TestService;
  let worker: RunningWorker;
  let app: TestApp;
  let origin = '';

  beforeAll(async () => {
    service = await startTestService('passkeys-origins', { PASSKEY_ORIGINS: appOrigin }, { ownPublicUrl: true });
    origin = new URL(service.url).origin;
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await registerTestApp(service, { name: 'Bank' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  test("when an app's page that may register passkeys answers a login page's challenge, then sign-in is refused; the sign-in page's own answer signs in", async () => {
    // Registered from the app's page, as PASSKEY_ORIGINS allows.
    const { authenticator } = await userWithPasskeyFrom(service, app, appOrigin, 'pk-eve', '+15550710005');

    const signIn = async (answerOrigin: string) => {
      const walker = new FormWalker(service.url);
      const page = await walker.page(authorizeUrl(service, app));
      const challenge = /data-challenge="([A-Za-z0-9_-]+)"/.exec(page.html)?.[1] as string;
      const answer = authenticator.get(challenge, { origin: answerOrigin });
      return walker.request(page.url, { form: { csrf: csrfOf(page.html), step: 'passkey', credential: JSON.stringify(answer) } });
    };
    const fromApp = await signIn(appOrigin);
    expect(fromApp).not.toHaveProperty('redirectedTo');
    expect(fromApp).toMatchObject({ status: 400 });
    expect((fromApp as Page).html).toContain('That passkey could not be verified. Try again, or continue with your user id.');
    expect(await signIn(origin)).toHaveProperty('redirectedTo');
  });
});
