import type { CommandStartedEvent } from 'mongodb';
import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { csrfOf, FormWalker, signInWithForms, type Page } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, uniqueName, type TestService } from '../support/test-service.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { insertUser } from '../support/user-fixtures.js';

const REDIRECT = 'https://app.example/callback';
/** Sign-ins started per address in a window here (instead of 300, to keep the test short). */
const STARTS = 8;
/** Forms posted per address in a window here (instead of 60). */
const POSTS = 5;
const SPENT_LOG = 'too many sign-ins started or sign-in pages loaded from this address: refused until the window ends';

/**
 * Requests that cost the stores without naming any user: authorization requests that start a
 * sign-in (each stores an interaction until its TTL) and form posts refused before any step
 * (a stale CSRF token). Callers are named by X-Forwarded-For behind one trusted proxy.
 */
describe('sign-in flood: requests that name no user still count against the address', () => {
  let service: TestService;
  let stop: () => Promise<void>;
  let authorizeUrl: () => string;
  // MongoDB's events are emitted in this process as each command is sent: a flag tells one request's.
  const mongoCommands: string[] = [];
  let counting = false;

  beforeAll(async () => {
    service = await startTestService(
      'signin-flood',
      {
        TRUST_PROXY: '1',
        RATE_LIMIT_LOGIN_PER_IP: String(POSTS),
        RATE_LIMIT_SIGN_IN_STARTS_PER_IP: String(STARTS),
        LOGIN_USER_STEP_FLOOR_MS: '0',
        MONGODB_URI: testMongoUri(uniqueName('signin-flood'), { monitorCommands: 'true' }),
      },
      { ownPublicUrl: true },
    );
    service.ctx.mongo.getClient().on('commandStarted', (event: CommandStartedEvent) => {
      if (counting) mongoCommands.push(`${event.commandName} ${String(event.command[event.commandName])}`);
    });
    const worker = await startDispatchWorker(service.config, memoryLogger().logger);
    const { clientId } = (await registerClient(service.services.clients, { name: 'Acme Bank', scopes: [], redirectUris: [REDIRECT] }))
      .client;
    const query = new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 's' });
    authorizeUrl = () => `${service.url}/svc/authserver/oauth/authorize?${query.toString()}`;
    stop = async () => {
      await worker.shutdown();
      await service.close();
    };
  });
  afterAll(() => stop());

  const interactionsStored = () => service.ctx.mongo.collection('oidc_records').countDocuments({ kind: 'Interaction' });
  const walkerAt = (address: string) => new FormWalker(service.url, { forwardedFor: address });
  /** The passkey challenge a user-id page offers (undefined when it offers none). */
  const challengeOf = (page: Page) => /data-challenge="([A-Za-z0-9_-]+)"/.exec(page.html)?.[1];

  /** One authorization request, not followed: where it sends the browser, or the page it answers. */
  async function authorize(walker: FormWalker): Promise<{ redirectedTo: string } | Page> {
    return walker.request(authorizeUrl(), { follow: false });
  }

  function expectRefusal(page: { redirectedTo: string } | Page): asserts page is Page {
    if ('redirectedTo' in page) throw new Error(`expected a 429 page, was sent to ${page.redirectedTo}`);
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    // The page's own words (not the code page's "Too many attempts"), its wait the Retry-After value.
    expect(page.html).toContain('<h1>Too many sign-in requests</h1>');
    const wait = page.headers.get('retry-after');
    expect(page.html).toContain(
      `Too many sign-in requests came from your network or device. Wait ${wait} second${wait === '1' ? '' : 's'}, then try again. Nothing is wrong with your account.`,
    );
  }

  test('when one address starts sign-ins without end, then it is refused 429 once its budget is spent, no interaction is stored from then on, and another address still signs in', async () => {
    const flooder = walkerAt('198.51.100.7');
    for (let i = 0; i < STARTS; i += 1) {
      const started = await authorize(flooder);
      expect('redirectedTo' in started ? started.redirectedTo : `${started.status}`).toContain('/svc/authserver/interaction/');
    }
    const storedWhenSpent = await interactionsStored();
    for (let i = 0; i < 3; i += 1) expectRefusal(await authorize(flooder));
    // The provider's router takes the path in any case and with a trailing slash: so does the budget.
    expectRefusal(await flooder.request(authorizeUrl().replace('/oauth/authorize?', '/OAuth/Authorize/?'), { follow: false }));
    expect(await interactionsStored()).toBe(storedWhenSpent);
    // The operator learns which address spent its budget, once.
    const spent = service.logLines().filter((line) => line.msg === SPENT_LOG && line.address === '198.51.100.7');
    expect(spent).toHaveLength(1);
    expect(spent[0]).toMatchObject({ level: 40, retryAfterSeconds: expect.any(Number) as number });

    await insertUser(service.ctx.mongo, { userId: 'flood-olga', mobileNumber: '+15550420001' });
    const callback = await signInWithForms(service, walkerAt('198.51.100.8'), authorizeUrl(), 'flood-olga', '+15550420001');
    expect(new URL(callback).searchParams.get('code')).toBeTruthy();
  });

  test('when one address reloads a sign-in page without end, then it is refused 429 once its budget is spent, and another address still opens its page', async () => {
    const flooder = walkerAt('198.51.100.12');
    const first = await flooder.page(authorizeUrl());
    // The authorization request and the first load took 2 of the budget.
    for (let i = 2; i < STARTS; i += 1) expect((await flooder.page(first.url)).status).toBe(200);
    expectRefusal(await flooder.request(first.url));
    expectRefusal(await flooder.request(authorizeUrl(), { follow: false }));
    expect((await walkerAt('198.51.100.13').page(authorizeUrl())).status).toBe(200);
  });

  test('when a person reloads the sign-in page a few times, then the sign-in still finishes', async () => {
    await insertUser(service.ctx.mongo, { userId: 'flood-pia', mobileNumber: '+15550420002' });
    const walker = walkerAt('198.51.100.9');
    const first = await walker.page(authorizeUrl());
    for (let i = 0; i < 2; i += 1) expect((await walker.page(first.url)).status).toBe(200);
    // Starting over from the app, as a person who pressed its sign-in button again.
    const callback = await signInWithForms(service, walker, authorizeUrl(), 'flood-pia', '+15550420002');
    expect(new URL(callback).searchParams.get('code')).toBeTruthy();
  });

  test('when one address loads the sign-out page without end, from no browser session (each load stores a session for its form, kept for a day), then it is refused 429 once its budget is spent, no session is stored from then on, and a person signed in elsewhere still signs out', async () => {
    const sessionsStored = () => service.ctx.mongo.collection('oidc_records').countDocuments({ kind: 'Session' });
    const signOutPage = `${service.url}/svc/authserver/session/end`;
    const before = await sessionsStored();
    // A new walker each time: no cookie, as a script that never keeps one.
    const fresh = () => walkerAt('198.51.100.14');
    for (let i = 0; i < STARTS; i += 1) expect((await fresh().page(signOutPage)).status).toBe(200);
    expect(await sessionsStored()).toBe(before + STARTS);
    for (let i = 0; i < 3; i += 1) expectRefusal(await fresh().request(signOutPage));
    // Posted, in another spelling, or its confirmation: the same budget.
    expectRefusal(await fresh().request(`${service.url}/svc/authserver/Session/End/`, { form: { client_id: 'x' } }));
    expectRefusal(await fresh().request(`${signOutPage}/confirm`, { form: { xsrf: 'x', logout: 'yes' } }));
    expect(await sessionsStored()).toBe(before + STARTS);
    // The address's sign-ins are refused too: one budget for the pages of the authorization server.
    expectRefusal(await authorize(fresh()));

    await insertUser(service.ctx.mongo, { userId: 'flood-quin', mobileNumber: '+15550420003' });
    const person = walkerAt('198.51.100.15');
    await signInWithForms(service, person, authorizeUrl(), 'flood-quin', '+15550420003');
    const page = await person.page(signOutPage);
    expect(page.status).toBe(200);
    const action = /<form method="post" action="([^"]+)"/.exec(page.html)?.[1] as string;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html)?.[1] as string;
    expect((await person.page(action, { form: { xsrf, logout: 'yes' } })).status).toBe(200);
    expect(
      await service.ctx.mongo.collection('oidc_records').countDocuments({ kind: 'Session', 'payload.accountId': { $regex: 'flood-quin' } }),
    ).toBe(0);
  });

  test("when a page on another site makes a person's browser ask for sign-in pages as images, scripts, fetches or frames, then nothing is stored or counted for them, and the person still signs in from that address", async () => {
    // What a browser sends for such requests (Fetch Metadata), and for the person's own navigation.
    const asImage = { 'sec-fetch-dest': 'image', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' };
    const asFetch = { 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' };
    const asFrame = { 'sec-fetch-dest': 'iframe', 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'cross-site' };
    // A page fetched ahead of a navigation that may never come (speculation rules), as a browser marks it.
    const asPrefetch = {
      'sec-fetch-dest': 'document',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-site': 'cross-site',
      'sec-purpose': 'prefetch',
    };
    const asPage = { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'cross-site' };
    const address = { forwardedFor: '198.51.100.16' };
    const storedBefore = await interactionsStored();
    const sessionsBefore = await service.ctx.mongo.collection('oidc_records').countDocuments({ kind: 'Session' });
    const answers = new Set<number>();
    for (const headers of [asImage, asFetch, asFrame, asPrefetch]) {
      const walker = new FormWalker(service.url, address, headers);
      for (let i = 0; i < STARTS; i += 1) {
        for (const url of [authorizeUrl(), `${service.url}/svc/authserver/interaction/abc`, `${service.url}/svc/authserver/session/end`]) {
          const answer = await walker.request(url, { follow: false });
          answers.add('redirectedTo' in answer ? 303 : answer.status);
        }
        const posted = await walker.request(`${service.url}/svc/authserver/interaction/abc`, {
          form: { csrf: 'x', step: 'user', userId: 'x' },
        });
        answers.add('redirectedTo' in posted ? 303 : posted.status);
      }
    }
    expect([...answers]).toEqual([400]);
    expect(await interactionsStored()).toBe(storedBefore);
    expect(await service.ctx.mongo.collection('oidc_records').countDocuments({ kind: 'Session' })).toBe(sessionsBefore);
    // An app's silent sign-in in a hidden frame (prompt=none) is not a sign-in page: it is answered as before.
    const silent = await new FormWalker(service.url, address, asFrame).request(`${authorizeUrl()}&prompt=none`, { follow: false });
    expect('redirectedTo' in silent && new URL(silent.redirectedTo).searchParams.get('error')).toBe('login_required');

    await insertUser(service.ctx.mongo, { userId: 'flood-rita', mobileNumber: '+15550420004' });
    const callback = await signInWithForms(
      service,
      new FormWalker(service.url, address, asPage),
      authorizeUrl(),
      'flood-rita',
      '+15550420004',
    );
    expect(new URL(callback).searchParams.get('code')).toBeTruthy();
  });

  test('when one address posts forms with a stale CSRF token, then each counts against its form budget and it is refused 429 once that is spent, while another address is not', async () => {
    const flooder = walkerAt('198.51.100.10');
    const first = await flooder.page(authorizeUrl());
    const answers: [number, string | null][] = [];
    for (let i = 0; i < POSTS; i += 1) {
      const page = await flooder.page(first.url, { form: { csrf: 'stale', step: 'user', userId: 'x' } });
      answers.push([page.status, page.headers.get('ratelimit')?.replace(/t=\d+/, 't=T') ?? null]);
    }
    // Each answer reports the address's budget, as a step's does.
    expect(answers).toEqual([4, 3, 2, 1, 0].map((left) => [403, `"sign-in-per-address";r=${left};t=T`]));
    expectRefusal(await flooder.request(first.url, { form: { csrf: 'stale', step: 'user', userId: 'x' } }));
    // The right token from that address is refused too: the budget is the address's. Its sign-in
    // can go on once the wait is over, so it is the login page again, with its form; what it says
    // is the address's page's words, not "Too many attempts" (about one user's steps and codes).
    const onTheForm = await flooder.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'x' } });
    expect(onTheForm.status).toBe(429);
    const wait = onTheForm.headers.get('retry-after');
    expect(Number(wait)).toBeGreaterThanOrEqual(1);
    expect(onTheForm.html).toContain(
      `Too many sign-in requests came from your network or device. Wait ${wait} second${wait === '1' ? '' : 's'}, then try again. Nothing is wrong with your account.`,
    );
    expect(onTheForm.html).not.toContain('Too many attempts');
    expect(csrfOf(onTheForm.html)).toBe(csrfOf(first.html));

    const other = walkerAt('198.51.100.11');
    const page = await other.page(authorizeUrl());
    expect((await other.page(page.url, { form: { csrf: 'stale', step: 'user', userId: 'x' } })).status).toBe(403);
    expect((await other.page(page.url, { form: { csrf: csrfOf(page.html), step: 'user', userId: 'flood-x' } })).status).toBe(200);
  });

  test("when a step is refused by a budget of the user id given, then the post reads the interaction and the sign-in's state once each, and its page is that step's page again", async () => {
    // An unknown user id: no code goes out after the answers (no work of this process that would
    // send MongoDB commands of its own meanwhile), and its codes count all the same.
    const walker = walkerAt('198.51.100.18');
    const first = await walker.page(authorizeUrl());
    const postUserId = (page: Page) => walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'user', userId: 'flood-nobody' } });
    // The codes budget of one user id and one address (3 by default), spent on the code page.
    for (let i = 0; i < 3; i += 1) expect((await postUserId(first)).status).toBe(200);
    mongoCommands.length = 0;
    counting = true;
    const onTheCodePage = await postUserId(first);
    counting = false;
    expect(onTheCodePage.status).toBe(429);
    expect(onTheCodePage.html).toContain('Too many attempts.');
    expect(onTheCodePage.html).toContain('name="otp"');
    expect(csrfOf(onTheCodePage.html)).toBe(csrfOf(first.html));
    expect(mongoCommands).toEqual(['find oidc_records', 'find login_states']);

    // A new sign-in from that address, refused at its first step: the user-id page again, with a
    // new passkey challenge (the post was admitted by the address's budget; its page is shown anew).
    const second = await walker.page(authorizeUrl());
    mongoCommands.length = 0;
    counting = true;
    const onTheUserIdPage = await postUserId(second);
    counting = false;
    expect(onTheUserIdPage.status).toBe(429);
    expect(onTheUserIdPage.html).toContain('Too many attempts.');
    expect(challengeOf(onTheUserIdPage)).toBeDefined();
    expect(challengeOf(onTheUserIdPage)).not.toBe(challengeOf(second));
    expect(mongoCommands).toEqual(['find oidc_records', 'find login_states', 'update login_states']);
  });

  test("when a form post with the right token is refused by the address's form budget, then it reads the interaction and the sign-in's state once each, writes nothing, and its page is the login page with the challenge it had", async () => {
    const flooder = walkerAt('198.51.100.17');
    const first = await flooder.page(authorizeUrl());
    for (let i = 0; i < POSTS; i += 1) await flooder.page(first.url, { form: { csrf: 'stale', step: 'user', userId: 'x' } });
    const stateOfPage = () =>
      service.ctx.mongo.collection('login_states').findOne({ csrf: csrfOf(first.html) }, { projection: { _id: 0 } });
    const stateBefore = await stateOfPage();
    expect(stateBefore?.passkeyChallenge).toBe(challengeOf(first));
    mongoCommands.length = 0;
    counting = true;
    const refused = await flooder.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'x' } });
    counting = false;
    expect(refused.status).toBe(429);
    expect(refused.html).toContain('Nothing is wrong with your account.');
    expect(csrfOf(refused.html)).toBe(csrfOf(first.html));
    // The interaction (the provider's record) and the sign-in's state for the CSRF check, and
    // nothing else: the state is not read a second time for the refusal, and no new passkey
    // challenge is written for the page it shows again, which offers the one still stored.
    expect(mongoCommands).toEqual(['find oidc_records', 'find login_states']);
    expect(await stateOfPage()).toEqual(stateBefore);
    expect(challengeOf(refused)).toBe(challengeOf(first));
  });
});
