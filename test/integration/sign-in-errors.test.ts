import { createHash, randomBytes } from 'node:crypto';
import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken, requestToken } from '../support/auth-helpers.js';
import { readOutbox } from '../support/otp-helpers.js';
import { csrfOf, FormWalker, loginCodeFor, loginCodesSettled, signInWithForms } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { adminRequest } from '../support/admin-requests.js';

const REDIRECT = 'https://app.example/callback';

/** Every refusal of the sign-in flow (authorization endpoint, pages, token endpoint, user tokens), over plain HTTP. */
describe('sign-in: errors, replays and refusals', () => {
  let service: TestService;
  let worker: RunningWorker;
  let confidential: { clientId: string; clientSecret: string };
  let publicClientId: string;

  beforeAll(async () => {
    service = await startTestService(
      'signin-errors',
      { RATE_LIMIT_LOGIN_PER_IP: '100000', RATE_LIMIT_SIGN_IN_STARTS_PER_IP: '100000' },
      { ownPublicUrl: true },
    );
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    const created = await registerClient(service.services.clients, { name: 'Acme Bank', scopes: ['otp'], redirectUris: [REDIRECT] });
    confidential = { clientId: created.client.clientId, clientSecret: created.clientSecret as string };
    publicClientId = (
      await registerClient(service.services.clients, { name: 'Phone app', scopes: [], redirectUris: [REDIRECT], public: true })
    ).client.clientId;
    await insertUser(service.ctx.mongo, { userId: 'erin', mobileNumber: '+15550300001' });
    await insertUser(service.ctx.mongo, { userId: 'frank', mobileNumber: '+15550300002' });
    await insertUser(service.ctx.mongo, { userId: 'gina', mobileNumber: '+15550300003' });
    await insertUser(service.ctx.mongo, { userId: 'gone', mobileNumber: '+15550300004', status: 'DELETED' });
    await insertUser(service.ctx.mongo, { userId: 'hank', mobileNumber: '+15550300005' });
    await insertUser(service.ctx.mongo, { userId: 'ivy', mobileNumber: '+15550300006' });
    await insertUser(service.ctx.mongo, { userId: 'jade', mobileNumber: '+15550300007' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };

  function authorizeUrl(params: Record<string, string>): string {
    return `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams(params).toString()}`;
  }

  const validParams = (overrides: Record<string, string> = {}) => {
    const { challenge } = pkce();
    return {
      client_id: confidential.clientId,
      response_type: 'code',
      scope: 'openid notifications',
      redirect_uri: REDIRECT,
      state: 'st-123',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...overrides,
    };
  };

  /** Where the authorization endpoint sends the browser, without following. */
  async function firstHop(params: Record<string, string>): Promise<Response> {
    return fetch(authorizeUrl(params), { redirect: 'manual' });
  }

  async function tokenForm(form: Record<string, string>, auth: 'basic' | 'none' = 'basic'): Promise<Response> {
    if (auth === 'basic') return requestToken(service, confidential, form);
    return fetch(`${service.url}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** A new sign-in of `userId` (its code sent to `mobile`) with these parameters: the page asking for the code, and the code. */
  async function atCodeStep(userId: string, mobile: string, params: Record<string, string> = validParams()) {
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(params));
    const since = new Date();
    const page = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
    return { walker, page, code: await loginCodeFor(service, mobile, since) };
  }

  async function signInFor(userId: string, mobile: string, params: Record<string, string>) {
    const callback = new URL(await signInWithForms(service, new FormWalker(service.url), authorizeUrl(params), userId, mobile));
    return callback;
  }

  describe('errors that never redirect (HTML 400 page)', () => {
    test.each([
      ['an unknown client_id', { client_id: 'nobody' }],
      ['a redirect_uri with another path', { redirect_uri: 'https://app.example/callback/other' }],
      ['a redirect_uri with an extra query', { redirect_uri: 'https://app.example/callback?x=1' }],
      ['a redirect_uri with a trailing slash', { redirect_uri: 'https://app.example/callback/' }],
      ['a redirect_uri on another host', { redirect_uri: 'https://evil.example/callback' }],
      ['no redirect_uri', { redirect_uri: '' }],
    ])('when the request has %s, then a 400 HTML page, no Location', async (_label, override) => {
      const params = validParams(override);
      if (params.redirect_uri === '') delete (params as Partial<typeof params>).redirect_uri;
      const res = await firstHop(params);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await res.text()).toContain('Sign-in error');
    });
  });

  describe('errors that go back to the app (RFC 6749 4.1.2.1, with state)', () => {
    test.each([
      ['no response_type', { response_type: '' }, 'invalid_request'],
      ['a scope the client is not registered for', { scope: 'openid users' }, 'invalid_scope'],
      // scope is a required parameter. Refused before the login page, so no code is sent to
      // a person whose sign-in could only end in access_denied.
      ['no scope', { scope: '' }, 'invalid_request'],
      ['only scopes this service does not know', { scope: 'profile email' }, 'invalid_scope'],
      ['code_challenge_method plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ])('when the request has %s, then 303 to the redirect URI with error %s and the state', async (_label, override, error) => {
      const params: Record<string, string> = validParams(override);
      for (const [k, v] of Object.entries(params)) if (v === '') delete params[k];
      const res = await firstHop(params);
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location') as string);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('error_description')).toEqual(expect.any(String));
      expect(location.searchParams.get('state')).toBe('st-123');
      expect(location.searchParams.get('iss')).toBe(`${service.url}/svc/authserver`);
    });

    test('when response_type is token, then unsupported_response_type with the state, in the fragment as for that response type', async () => {
      const res = await firstHop(validParams({ response_type: 'token' }));
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location') as string);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      const fragment = new URLSearchParams(location.hash.slice(1));
      expect(fragment.get('error')).toBe('unsupported_response_type');
      expect(fragment.get('state')).toBe('st-123');
    });

    test('when a public client sends no code_challenge, then invalid_request (PKCE is required) with the state', async () => {
      const res = await firstHop({
        client_id: publicClientId,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: REDIRECT,
        state: 'pub-1',
      });
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location') as string);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
      expect(location.searchParams.get('state')).toBe('pub-1');
    });

    test('when a third-party app is denied on the consent page, then access_denied with the state', async () => {
      const partner = await registerClient(service.services.clients, {
        name: 'Partner',
        scopes: [],
        redirectUris: [REDIRECT],
        firstParty: false,
      });
      const {
        walker,
        page: codePage,
        code,
      } = await atCodeStep('hank', '+15550300005', validParams({ client_id: partner.client.clientId }));
      const consent = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: code } });
      expect(consent.html).toContain('Allow access?');
      const back = new URL(await walker.leaves(consent.url, { form: { csrf: csrfOf(consent.html), step: 'consent', decision: 'deny' } }));
      expect(back.searchParams.get('error')).toBe('access_denied');
      expect(back.searchParams.get('state')).toBe('st-123');
    });
  });

  test('when a code is redeemed twice, then the second is invalid_grant and the tokens of the first stop working', async () => {
    const { verifier, challenge } = pkce();
    const callback = await signInFor('erin', '+15550300001', validParams({ code_challenge: challenge }));
    const code = callback.searchParams.get('code') as string;
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
    const first = await tokenForm(form);
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as { access_token: string };
    expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    const again = await tokenForm(form);
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ error: 'invalid_grant', error_description: 'grant request is invalid' });
    expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  test('when each of ten codes is redeemed three times at once, then no token of them stays usable: the reuse revokes what the code issued (RFC 6749 4.1.2)', async () => {
    for (let n = 0; n < 10; n++) {
      const userId = `reuse-${n}`;
      const mobile = `+1555031${String(n).padStart(4, '0')}`;
      await insertUser(service.ctx.mongo, { userId, mobileNumber: mobile });
      const { verifier, challenge } = pkce();
      const callback = await signInFor(userId, mobile, validParams({ code_challenge: challenge }));
      const form = {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') as string,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      };
      const answers = await Promise.all([tokenForm(form), tokenForm(form), tokenForm(form)]);
      // The code is consumed once (a conditional write); the others find it used and end its grant.
      // The one that consumed it answers tokens, or invalid_grant when the grant ended before its
      // token was stored; either way nothing it issued works.
      const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> })));
      expect(bodies.filter((b) => b.status === 200).length).toBeLessThanOrEqual(1);
      expect(bodies.filter((b) => b.status === 400 && b.body.error === 'invalid_grant').length).toBeGreaterThanOrEqual(2);
      for (const { body } of bodies.filter((b) => b.status === 200)) {
        const me = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${body.access_token}` } });
        expect({ code: n, status: me.status }).toEqual({ code: n, status: 401 });
      }
    }
  });

  test('when a code is issued, then it lives at most 60 seconds and is single use', async () => {
    const { challenge } = pkce();
    const callback = await signInFor('frank', '+15550300002', validParams({ code_challenge: challenge }));
    const record = await service.ctx.mongo
      .collection('oidc_records')
      .findOne({ kind: 'AuthorizationCode', key: callback.searchParams.get('code') });
    const payload = record?.payload as { iat: number; exp: number };
    expect(payload.exp - payload.iat).toBeLessThanOrEqual(60);
  });

  test('when response_mode is fragment or form_post, then the code comes back that way', async () => {
    const fragment = await signInWithForms(
      service,
      new FormWalker(service.url),
      authorizeUrl(validParams({ response_mode: 'fragment' })),
      'frank',
      '+15550300002',
    );
    const hash = new URLSearchParams(new URL(fragment).hash.slice(1));
    expect(hash.get('code')).toEqual(expect.any(String));
    expect(hash.get('state')).toBe('st-123');

    const { walker, page: codePage, code } = await atCodeStep('frank', '+15550300002', validParams({ response_mode: 'form_post' }));
    const posted = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: code } });
    expect(posted.status).toBe(200);
    expect(posted.html).toContain(`action="${REDIRECT}"`);
    expect(posted.html).toMatch(/name="code" value="[^"]+"/);
    expect(posted.html).toContain('name="state" value="st-123"');
  });

  test('when the code verifier does not match, then invalid_grant', async () => {
    const { challenge } = pkce();
    const callback = await signInFor('frank', '+15550300002', validParams({ code_challenge: challenge }));
    const res = await tokenForm({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code') as string,
      redirect_uri: REDIRECT,
      code_verifier: pkce().verifier,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  });

  test('when a form arrives without its CSRF token, or with another, then 403 and nothing is sent', async () => {
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(validParams()));
    const missing = await walker.page(first.url, { form: { step: 'user', userId: 'gina' } });
    expect(missing.status).toBe(403);
    expect(missing.html).toContain('security token');
    const wrong = await walker.page(first.url, { form: { csrf: 'x'.repeat(43), step: 'user', userId: 'gina' } });
    expect(wrong.status).toBe(403);
    await loginCodesSettled(service, authorizeUrl(validParams()));
    expect(await readOutbox(service, '+15550300003')).toEqual([]);
  });

  test('when the browser hangs up before the code page arrives, then the code is still sent and signs the user in from the reloaded page', async () => {
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(validParams()));
    const since = new Date();
    // The user-id step answers no sooner than its floor (250 ms): the connection is gone by then.
    await walker.postAndHangUp(first.url, { csrf: csrfOf(first.html), step: 'user', userId: 'jade' }, 50);
    const code = await loginCodeFor(service, '+15550300007', since);
    const reloaded = await walker.page(first.url);
    expect(reloaded.html).toContain('name="otp"');
    const done = await walker.leaves(reloaded.url, { form: { csrf: csrfOf(reloaded.html), step: 'code', otp: code } });
    expect(done.startsWith(`${REDIRECT}?code=`)).toBe(true);
  });

  test('when the sign-in cookie is missing (another browser), then the page says the sign-in expired', async () => {
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(validParams()));
    const stranger = await fetch(first.url);
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain('This sign-in has expired');
  });

  test('when the app is deleted while its user signs in, then the page says the sign-in expired and no code is sent (no other enterprise’s users are looked up)', async () => {
    const app = await registerClient(service.services.clients, {
      name: 'Short-lived app',
      scopes: [],
      redirectUris: [REDIRECT],
      public: true,
      enterpriseId: 'short-lived',
    });
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(validParams({ client_id: app.client.clientId })));
    expect(first.status).toBe(200);
    expect((await adminRequest(service, 'DELETE', `/admin/clients/${app.client.clientId}`)).status).toBe(204);
    // kurt is a user of the default enterprise, not of the deleted app's.
    await insertUser(service.ctx.mongo, { userId: 'kurt', mobileNumber: '+15550300009' });
    const answer = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'kurt' } });
    expect(answer.status).toBe(400);
    expect(answer.html).toContain('This sign-in has expired');
    const reloaded = await walker.page(first.url);
    expect(reloaded.status).toBe(400);
    expect(reloaded.html).toContain('This sign-in has expired');
    await loginCodesSettled(service, authorizeUrl(validParams()));
    expect(await readOutbox(service, '+15550300009')).toEqual([]);
  });

  test('when the redirect URI is removed from the app while its user signs in, then the sign-in ends on the error page and no code goes to the removed URI', async () => {
    const kept = 'https://app.example/kept';
    const app = await registerClient(service.services.clients, { name: 'Moving app', scopes: [], redirectUris: [REDIRECT, kept] });
    const { walker, page, code } = await atCodeStep('jade', '+15550300007', validParams({ client_id: app.client.clientId }));
    const patched = await adminRequest(service, 'PATCH', `/admin/clients/${app.client.clientId}`, { redirectUris: [kept] });
    expect(patched.status).toBe(200);
    const after = await walker.request(page.url, { form: { csrf: csrfOf(page.html), step: 'code', otp: code } });
    expect('redirectedTo' in after).toBe(false);
    const shown = after as Exclude<typeof after, { redirectedTo: string }>;
    expect(shown.status).toBe(400);
    expect(shown.html).toContain('Sign-in error');
    expect(shown.html).toContain('invalid_redirect_uri');
  });

  test('when the redirect URI is removed from a third-party app while its user is on the consent page and denies, then the error page, no redirect to the removed URI', async () => {
    const kept = 'https://partner.example/kept';
    const removed = 'https://partner.example/removed';
    const partner = await registerClient(service.services.clients, {
      name: 'Lapsed partner',
      scopes: [],
      redirectUris: [removed, kept],
      firstParty: false,
    });
    const { walker, page, code } = await atCodeStep(
      'ivy',
      '+15550300006',
      validParams({ client_id: partner.client.clientId, redirect_uri: removed }),
    );
    const consent = await walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'code', otp: code } });
    expect(consent.html).toContain('Allow access?');
    const patched = await adminRequest(service, 'PATCH', `/admin/clients/${partner.client.clientId}`, { redirectUris: [kept] });
    expect(patched.status).toBe(200);
    const after = await walker.request(consent.url, { form: { csrf: csrfOf(consent.html), step: 'consent', decision: 'deny' } });
    expect(after).not.toHaveProperty('redirectedTo');
    const shown = after as Exclude<typeof after, { redirectedTo: string }>;
    expect(shown.status).toBe(400);
    expect(shown.headers.get('location')).toBeNull();
    expect(shown.html).toContain('Sign-in error');
    expect(shown.html).toContain('invalid_redirect_uri');
  });

  test('when the user id is unknown or DELETED, then the same code page follows, no message is sent, and codes fail like wrong ones', async () => {
    for (const userId of ['nobody-here', 'gone']) {
      const walker = new FormWalker(service.url);
      const first = await walker.page(authorizeUrl(validParams()));
      const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
      expect(codePage.status).toBe(200);
      expect(codePage.html).toContain('name="otp"');
      const wrong = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: '123456' } });
      expect(wrong.status).toBe(400);
      expect(wrong.html).toContain('That code is not right. 4 attempts left.');
    }
    await loginCodesSettled(service, authorizeUrl(validParams()));
    expect(await readOutbox(service, '+15550300004')).toEqual([]);
  });

  test('when the code lifetime has passed, then a known and an unknown user id both get the expired answer', async () => {
    // Both pages are aged by moving the clock back in the store: the state's code time for both,
    // and the real code's expiry for the known one (what waiting LOGIN_CODE_TTL_SECONDS does).
    await insertUser(service.ctx.mongo, { userId: 'late-kim', mobileNumber: '+15550300041' });
    const ttlMs = service.config.login.codeTtlSeconds * 1000;
    const alerts: Record<string, string> = {};
    for (const userId of ['late-kim', 'late-nobody']) {
      const walker = new FormWalker(service.url);
      const first = await walker.page(authorizeUrl(validParams()));
      const since = new Date();
      const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
      if (userId === 'late-kim') await loginCodeFor(service, '+15550300041', since);
      const uid = new URL(codePage.url).pathname.split('/').pop();
      const past = new Date(Date.now() - ttlMs - 1000);
      await service.ctx.mongo.collection('login_states').updateOne({ uid }, { $set: { codeSentAt: past } });
      await service.ctx.mongo.collection('otps').updateMany({ userId }, { $set: { expiresAt: past } });
      const late = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: '000000' } });
      alerts[userId] = `${late.status} ${/role="alert">([^<]+)</.exec(late.html)?.[1] ?? ''}`;
    }
    expect(alerts).toEqual({
      'late-kim': '400 This code has expired. Send a new code to try again.',
      'late-nobody': '400 This code has expired. Send a new code to try again.',
    });
  });

  test('when five wrong codes are entered, then the code locks and even the right one is refused', async () => {
    const { walker, page: codePage, code } = await atCodeStep('ivy', '+15550300006');
    let page = codePage;
    const wrongCode = code === '000000' ? '111111' : '000000';
    const messages: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      page = await walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'code', otp: wrongCode } });
      messages.push(/role="alert">([^<]+)</.exec(page.html)?.[1] ?? '');
    }
    expect(messages).toEqual([
      'That code is not right. 4 attempts left.',
      'That code is not right. 3 attempts left.',
      'That code is not right. 2 attempts left.',
      'That code is not right. 1 attempt left.',
      'Too many wrong codes. Send a new code to try again.',
    ]);
    page = await walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'code', otp: code } });
    expect(page.html).toContain('Too many wrong codes');
  });

  test('when ten wrong codes are posted at once, then at most five are checked and the code is locked', async () => {
    await insertUser(service.ctx.mongo, { userId: 'lena', mobileNumber: '+15550300012' });
    const { walker, page: codePage, code } = await atCodeStep('lena', '+15550300012');
    const wrongCode = code === '000000' ? '111111' : '000000';
    const pages = await Promise.all(
      Array.from({ length: 10 }, () => walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: wrongCode } })),
    );
    const alerts = pages.map((p) => /role="alert">([^<]+)</.exec(p.html)?.[1] ?? '');
    expect(alerts.filter((a) => a.startsWith('That code is not right')).length).toBeLessThanOrEqual(4);
    const otp = await service.ctx.mongo.collection('otps').findOne({ userId: 'lena' });
    expect(otp?.attemptsUsed).toBe(5);
    const after = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: code } });
    expect(after.html).toContain('Too many wrong codes');
  });

  describe('blocked users and user tokens', () => {
    const admin = (method: string, path: string, body?: unknown) => adminRequest(service, method, path, body);

    test('when a signed-in user is blocked, then /v1/me answers 403 user_blocked, refresh fails, and no new sign-in sends a code', async () => {
      await insertUser(service.ctx.mongo, { userId: 'jack', mobileNumber: '+15550300010' });
      const { verifier, challenge } = pkce();
      const callback = await signInFor(
        'jack',
        '+15550300010',
        validParams({ code_challenge: challenge, scope: 'openid offline_access notifications', prompt: 'consent' }),
      );
      const tokens = (await (
        await tokenForm({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code') as string,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        })
      ).json()) as { access_token: string; refresh_token: string };
      expect(typeof tokens.refresh_token).toBe('string');

      const block = await admin('PUT', '/admin/users/jack/blocked', { blocked: true, reason: 'lost phone' });
      expect(block.status).toBe(200);
      expect(await block.json()).toMatchObject({ userId: 'jack', blocked: true, blockedReason: 'lost phone' });

      const me = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(me.status).toBe(403);
      expect(await me.json()).toEqual({ error: 'user_blocked', error_description: 'User is blocked', code: 141 });
      const refresh = await tokenForm({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      expect(refresh.status).toBe(400);
      expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');

      const before = (await readOutbox(service, '+15550300010')).length;
      const walker = new FormWalker(service.url);
      const first = await walker.page(authorizeUrl(validParams()));
      const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'jack' } });
      expect(codePage.html).toContain('name="otp"');
      await loginCodesSettled(service, authorizeUrl(validParams()));
      expect(await readOutbox(service, '+15550300010')).toHaveLength(before);

      // Unblocking restores nothing: the token from before the block stays refused.
      expect((await admin('PUT', '/admin/users/jack/blocked', { blocked: false })).status).toBe(200);
      expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    });

    test('when a blocked user is asked an OTP for by an enterprise, then 404 User not found', async () => {
      await insertUser(service.ctx.mongo, { userId: 'kate', mobileNumber: '+15550300011' });
      await admin('PUT', '/admin/users/kate/blocked', { blocked: true });
      const { accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
      const res = await fetch(`${service.url}/v1/svc-otp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'kate', dispatchOptions: { SMS: 'otp_sms' }, dynamicMacros: {}, attempts: 3, expiresIn: 60 }),
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { message: string }).message).toBe('User not found');
    });

    test('when the block route names an unknown user or has a bad body, then 404 and 422', async () => {
      const unknown = await admin('PUT', '/admin/users/nobody-at-all/blocked', { blocked: true });
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { message: string }).message).toBe('User not found');
      const bad = await admin('PUT', '/admin/users/erin/blocked', { blocked: 'yes' });
      expect(bad.status).toBe(422);
    });

    test('when an enterprise token is used on /v1/me, then 401 invalid_token', async () => {
      const { accessToken } = await createClientWithToken(service, { scopes: ['otp', 'notifications'] });
      const res = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'invalid_token', error_description: `Invalid access token: ${accessToken}`, code: 39 });
    });

    test('when a user token is used on an enterprise route (/v1/svc-otp), then 401 invalid_token', async () => {
      const { verifier, challenge } = pkce();
      const callback = await signInFor('frank', '+15550300002', validParams({ code_challenge: challenge }));
      const tokens = (await (
        await tokenForm({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code') as string,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        })
      ).json()) as { access_token: string };
      const res = await fetch(`${service.url}/v1/svc-otp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'frank', dispatchOptions: { SMS: 'otp_sms' }, dynamicMacros: {}, attempts: 3, expiresIn: 60 }),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'invalid_token', error_description: `Invalid access token: ${tokens.access_token}` });
    });

    test('when /v1/me is called without a token, then 401 unauthorized', async () => {
      const res = await fetch(`${service.url}/v1/me`);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: 'unauthorized',
        error_description: 'Full authentication is required to access this resource',
        code: 39,
      });
    });
  });

  test('when the sign-in pages set cookies, then they are HttpOnly, SameSite=Lax, and not Secure on a plain-http local run', async () => {
    const walker = new FormWalker(service.url);
    await walker.page(authorizeUrl(validParams()));
    const lines = walker.setCookieLines.filter((l) => /^_interaction|^_session/.test(l) && !/expires=Thu, 01 Jan 1970/i.test(l));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(/httponly/i);
      expect(line).toMatch(/samesite=lax/i);
      expect(line).not.toMatch(/;\s*secure/i);
    }
  });
});

describe('sign-in: rate limits', () => {
  let service: TestService;
  let clientId: string;
  beforeAll(async () => {
    service = await startTestService(
      'signin-limits',
      { RATE_LIMIT_LOGIN_PER_IP: '4', RATE_LIMIT_LOGIN_CODES_PER_USER: '2' },
      { ownPublicUrl: true },
    );
    clientId = (await registerClient(service.services.clients, { name: 'Acme', scopes: [], redirectUris: [REDIRECT] })).client.clientId;
  });
  afterAll(async () => {
    await service.close();
  });

  const start = async (walker: FormWalker) =>
    walker.page(
      `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 's' }).toString()}`,
    );

  test('when codes for one user id are asked too often, then 429 with Retry-After on the page, whatever the user', async () => {
    const walker = new FormWalker(service.url);
    let page = await start(walker);
    page = await walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'user', userId: 'someone' } });
    expect(page.status).toBe(200);
    page = await walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'resend' } });
    expect(page.status).toBe(200);
    page = await walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'resend' } });
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(page.html).toMatch(/Too many attempts. Try again in \d+ seconds./);
  });

  test('when one address posts too many forms, then 429', async () => {
    const walker = new FormWalker(service.url);
    let page = await start(walker);
    const statuses: number[] = [];
    const budgets: (string | null)[][] = [];
    for (let i = 0; i < 3; i += 1) {
      page = await walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'user', userId: 'bad id with spaces' } });
      statuses.push(page.status);
      budgets.push([page.headers.get('ratelimit-policy'), page.headers.get('ratelimit')?.replace(/t=\d+/, 't=T') ?? null]);
    }
    // 3 posts of the first test + these: the fourth post of this address is the last allowed.
    expect(statuses).toEqual([400, 429, 429]);
    // The address's own budget is reported on every post (never a budget tied to a user id).
    const policy = '"sign-in-per-address";q=4;w=60';
    expect(budgets).toEqual([
      [policy, '"sign-in-per-address";r=0;t=T'],
      [policy, '"sign-in-per-address";r=0;t=T'],
      [policy, '"sign-in-per-address";r=0;t=T'],
    ]);
  });
});

describe('sign-in: cookies behind https', () => {
  let service: TestService;
  let clientId: string;
  beforeAll(async () => {
    // Plain http on loopback behind a TLS-terminating proxy: PUBLIC_URL says https.
    service = await startTestService('signin-https', { PUBLIC_URL: 'https://id.example.test' });
    clientId = (await registerClient(service.services.clients, { name: 'Acme', scopes: [], redirectUris: [REDIRECT] })).client.clientId;
  });
  afterAll(async () => {
    await service.close();
  });

  test('when PUBLIC_URL is https, then the sign-in cookies are also Secure, under names with the __Secure- prefix', async () => {
    const res = await fetch(
      `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 's' }).toString()}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/svc\/authserver\/interaction\//);
    const lines = res.headers.getSetCookie();
    expect(lines.map((l) => l.split('=')[0])).toEqual(
      expect.arrayContaining(['__Secure-svc-interaction', '__Secure-svc-interaction-resume']),
    );
    expect(lines.filter((l) => !l.startsWith('__Secure-svc-'))).toEqual([]);
    for (const line of lines) expect(line).toMatch(/;\s*secure/i);
    for (const line of lines) expect(line).toMatch(/httponly/i);
  });
});
