import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NotificationClient, SignIn, SvcIdentityError, type ErrorKind } from '../src/index.js';

/**
 * A real HTTP server playing the service's answers (its routes say which), so the library's real
 * fetch, timeouts and oauth4webapi meet real responses.
 */
type Handler = (req: IncomingMessage, res: ServerResponse, url: string) => void;

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

describe('one error type for every failure', () => {
  let server: Server;
  let base: string;
  let handler: Handler;
  const hanging = new Set<ServerResponse>();

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res, req.url ?? ''));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of hanging) res.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const client = (options: Partial<ConstructorParameters<typeof NotificationClient>[0]> = {}) =>
    new NotificationClient({ serviceUrl: base, getAccessToken: () => 'token', ...options });

  async function failure(promise: Promise<unknown>): Promise<SvcIdentityError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SvcIdentityError);
    return error as SvcIdentityError;
  }

  test.each<[string, number, Record<string, unknown>, ErrorKind, number]>([
    ['401 invalid_token', 401, { error: 'invalid_token', error_description: 'Invalid access token: token' }, 'sign-in-again', 39],
    [
      '403 insufficient_scope',
      403,
      { error: 'insufficient_scope', error_description: 'scope notifications needed', code: 39 },
      'sign-in-again',
      39,
    ],
    ['403 user_blocked', 403, { status: 403, error: 'user_blocked', message: 'User is blocked', code: 141 }, 'refused', 141],
    ['404 with the service error body', 404, { status: 404, error: 'Not Found', message: 'Notification not found', code: 4 }, 'refused', 4],
    [
      '503 while the service is unavailable',
      503,
      { status: 503, error: 'Service Unavailable', message: 'try later', code: 39 },
      'network',
      39,
    ],
  ])(
    'when the service answers %s, then SvcIdentityError says kind and code, with the body as cause',
    async (_case, status, body, kind, code) => {
      handler = (_req, res) => json(res, status, body);
      const error = await failure(client().getNotifications(0, '', 1, '', ''));
      expect(error).toMatchObject({ name: 'SvcIdentityError', kind, code, status, operation: 'GetNotifications' });
      expect(error.cause).toEqual(body);
      expect(error.message).toBe(body.message ?? body.error_description);
    },
  );

  test("when the service cannot be reached, then kind network with fetch's error as cause", async () => {
    const error = await failure(
      new NotificationClient({ serviceUrl: 'http://127.0.0.1:9', getAccessToken: () => 't' }).getNotifications(0, '', 1, '', ''),
    );
    expect(error).toMatchObject({ kind: 'network', code: 39, status: undefined });
    expect((error.cause as Error).name).toBe('TypeError'); // fetch's own error, from Node's realm
  });

  test('when the service does not answer in time, then kind network after timeoutMs', async () => {
    handler = (_req, res) => hanging.add(res);
    const started = Date.now();
    const error = await failure(client({ timeoutMs: 200 }).getNotifications(0, '', 1, '', ''));
    expect(error).toMatchObject({ kind: 'network', message: expect.stringContaining('no answer within 200 ms') });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('when getAccessToken fails, then kind sign-in-again before any request, with the original as cause', async () => {
    let requests = 0;
    handler = (_req, res) => {
      requests += 1;
      json(res, 200, { notifications: [] });
    };
    const original = new Error('refresh token expired');
    const error = await failure(
      client({
        getAccessToken: () => {
          throw original;
        },
      }).getNotifications(0, '', 1, '', ''),
    );
    expect(error).toMatchObject({ kind: 'sign-in-again', cause: original });
    expect(requests).toBe(0);
  });

  describe('sign-in', () => {
    const discovery = () => ({
      issuer: `${base}/svc/authserver`,
      authorization_endpoint: `${base}/svc/authserver/oauth/authorize`,
      token_endpoint: `${base}/svc/authserver/oauth/token`,
      response_types_supported: ['code'],
    });
    const signIn = () => new SignIn({ serviceUrl: base, clientId: 'app', redirectUri: 'http://127.0.0.1/cb', allowInsecureHttp: true });
    const withToken =
      (status: number, body: unknown): Handler =>
      (_req, res, url) =>
        url.endsWith('/.well-known/openid-configuration') ? json(res, 200, discovery()) : json(res, status, body);

    test("when a refresh token is expired or revoked (invalid_grant), then kind sign-in-again, not oauth4webapi's ResponseBodyError", async () => {
      handler = withToken(400, { error: 'invalid_grant', error_description: 'grant request is invalid' });
      const error = await failure(signIn().refresh('old'));
      expect(error).toMatchObject({ kind: 'sign-in-again', operation: 'Refresh', status: 400, details: { error: 'invalid_grant' } });
      expect(error.message).toBe('grant request is invalid');
      expect((error.cause as Error).name).toBe('ResponseBodyError');
    });

    test('when the token endpoint answers 401, then kind sign-in-again', async () => {
      handler = withToken(401, { error: 'invalid_client', error_description: 'client authentication failed' });
      expect(await failure(signIn().refresh('old'))).toMatchObject({ kind: 'sign-in-again', status: 401 });
    });

    test('when the token endpoint refuses the request otherwise, then kind refused with its error', async () => {
      handler = withToken(400, { error: 'invalid_scope', error_description: 'scope not allowed' });
      expect(await failure(signIn().refresh('old'))).toMatchObject({ kind: 'refused', code: 4, details: { error: 'invalid_scope' } });
    });

    test('when discovery answers 503 or the service is unreachable, then kind network', async () => {
      handler = (_req, res) => json(res, 503, { error: 'unavailable' });
      expect(await failure(signIn().start())).toMatchObject({ kind: 'network', operation: 'Discover', status: 503 });
      const away = new SignIn({
        serviceUrl: 'http://127.0.0.1:9',
        clientId: 'app',
        redirectUri: 'http://127.0.0.1/cb',
        allowInsecureHttp: true,
      });
      expect(await failure(away.start())).toMatchObject({ kind: 'network', operation: 'Discover' });
    });

    test('when start is given maxAge, then the sign-in URL carries max_age, and a bad maxAge is refused', async () => {
      handler = withToken(200, {});
      const flow = signIn();
      expect(new URL((await flow.start()).url).searchParams.has('max_age')).toBe(false);
      expect(new URL((await flow.start({ maxAge: 300 })).url).searchParams.get('max_age')).toBe('300');
      expect(await failure(flow.start({ maxAge: -1 }))).toMatchObject({ kind: 'refused', code: 4, operation: 'StartSignIn' });
    });

    test('when start is given maxAge but the scope has no openid, then it asks for a new sign-in (prompt=login) instead', async () => {
      handler = withToken(200, {});
      const plain = new SignIn({
        serviceUrl: base,
        clientId: 'app',
        redirectUri: 'http://127.0.0.1/cb',
        scope: 'notifications',
        allowInsecureHttp: true,
      });
      const url = new URL((await plain.start({ maxAge: 300 })).url);
      expect(url.searchParams.has('max_age')).toBe(false);
      expect(url.searchParams.get('prompt')).toBe('login');
      const offline = new SignIn({
        serviceUrl: base,
        clientId: 'app',
        redirectUri: 'http://127.0.0.1/cb',
        scope: 'offline_access notifications',
        allowInsecureHttp: true,
      });
      expect(new URL((await offline.start({ maxAge: 300 })).url).searchParams.get('prompt')).toBe('consent login');
    });

    test('when the redirect comes back with an error or another state, then kind sign-in-again', async () => {
      handler = withToken(200, {});
      const flow = signIn();
      const { pending } = await flow.start();
      const declined = await failure(flow.finish(`http://127.0.0.1/cb?error=access_denied&state=${pending.state}`, pending));
      expect(declined).toMatchObject({ kind: 'sign-in-again', operation: 'FinishSignIn', details: { error: 'access_denied' } });
      const stale = await failure(flow.finish('http://127.0.0.1/cb?code=abc&state=another', pending));
      expect(stale).toMatchObject({ kind: 'sign-in-again', operation: 'FinishSignIn' });
    });
  });
});
