import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { csrfOf, FormWalker, type Page } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';

const REDIRECT = 'https://app.example/callback';
/** Forms posted per address in a window here (instead of 60). */
const POSTS = 5;

/**
 * Requests that cost the stores without naming any user: authorization requests that start a
 * sign-in (each stores an interaction until its TTL) and form posts refused before any step
 * (a stale CSRF token). Callers are named by X-Forwarded-For behind one trusted proxy.
 */
describe('sign-in flood: requests that name no user still count against the address', () => {
  let service: TestService;
  let stop: () => Promise<void>;
  let authorizeUrl: () => string;

  beforeAll(async () => {
    service = await startTestService(
      'signin-flood',
      {
        TRUST_PROXY: '1',
        RATE_LIMIT_LOGIN_PER_IP: String(POSTS),
        LOGIN_USER_STEP_FLOOR_MS: '0',
      },
      { ownPublicUrl: true },
    );
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

  const walkerAt = (address: string) => new FormWalker(service.url, { forwardedFor: address });

  function expectRefusal(page: { redirectedTo: string } | Page): asserts page is Page {
    if ('redirectedTo' in page) throw new Error(`expected a 429 page, was sent to ${page.redirectedTo}`);
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.html).toMatch(/Too many attempts\. Try again in \d+ seconds?\./);
  }

  test('when one address posts forms with a stale CSRF token, then each counts against its form budget and it is refused 429 once that is spent, while another address is not', async () => {
    const flooder = walkerAt('198.51.100.10');
    const first = await flooder.page(authorizeUrl());
    const statuses: number[] = [];
    for (let i = 0; i < POSTS; i += 1)
      statuses.push((await flooder.page(first.url, { form: { csrf: 'stale', step: 'user', userId: 'x' } })).status);
    expect(statuses).toEqual(Array<number>(POSTS).fill(403));
    expectRefusal(await flooder.request(first.url, { form: { csrf: 'stale', step: 'user', userId: 'x' } }));
    // The right token from that address is refused too: the budget is the address's.
    expectRefusal(await flooder.request(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'x' } }));

    const other = walkerAt('198.51.100.11');
    const page = await other.page(authorizeUrl());
    expect((await other.page(page.url, { form: { csrf: 'stale', step: 'user', userId: 'x' } })).status).toBe(403);
    expect((await other.page(page.url, { form: { csrf: csrfOf(page.html), step: 'user', userId: 'flood-x' } })).status).toBe(200);
  });
});
