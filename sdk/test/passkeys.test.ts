import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Passkeys, SvcIdentityError } from '../src/index.js';

/**
 * Passkeys against a real HTTP server playing the service, with a stand-in for the browser's
 * navigator.credentials: what the library sends, and how refusals come back.
 */
describe('Passkeys', () => {
  let server: Server;
  let base: string;
  const received: { method: string; url: string; auth: string | undefined; body: unknown }[] = [];
  let answer: (url: string) => [number, unknown];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          auth: req.headers.authorization,
          body: raw ? JSON.parse(raw) : undefined,
        });
        const [status, body] = answer(req.url ?? '');
        if (status === 204) res.writeHead(204).end();
        else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => (received.length = 0));

  const bytes = (text: string) => new TextEncoder().encode(text).buffer;
  const options = {
    challenge: 'Y2hhbGxlbmdl',
    rp: { id: 'id.example.com', name: 'id.example.com' },
    user: { id: 'dXNlcg', name: 'alice', displayName: 'Alice' },
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    excludeCredentials: [{ id: 'b2xk', type: 'public-key', transports: ['internal'] }],
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  };

  test('when a passkey is registered, then the options reach the browser as bytes and its answer reaches the service as base64url', async () => {
    let asked: CredentialCreationOptions | undefined;
    const credentials = {
      create: async (request?: CredentialCreationOptions) => {
        asked = request;
        return {
          id: 'Y3JlZA',
          rawId: bytes('cred'),
          type: 'public-key',
          response: { clientDataJSON: bytes('{}'), attestationObject: bytes('att'), getTransports: () => ['internal'] },
        } as unknown as Credential;
      },
    };
    answer = (url) => (url.endsWith('registration-options') ? [200, options] : [201, { id: 'p-1', name: 'Laptop' }]);
    const passkeys = new Passkeys({ serviceUrl: `${base}/`, getAccessToken: () => 'tok', credentials });
    expect(await passkeys.register('Laptop')).toEqual({ id: 'p-1', name: 'Laptop' });
    expect(new TextDecoder().decode(asked?.publicKey?.challenge as Uint8Array)).toBe('challenge');
    expect(new TextDecoder().decode(asked?.publicKey?.user.id as Uint8Array)).toBe('user');
    expect(new TextDecoder().decode(asked?.publicKey?.excludeCredentials?.[0]?.id as Uint8Array)).toBe('old');
    expect(received).toEqual([
      { method: 'POST', url: '/v1/me/passkeys/registration-options', auth: 'Bearer tok', body: undefined },
      {
        method: 'POST',
        url: '/v1/me/passkeys',
        auth: 'Bearer tok',
        body: {
          name: 'Laptop',
          credential: {
            id: 'Y3JlZA',
            rawId: 'Y3JlZA',
            type: 'public-key',
            clientExtensionResults: {},
            response: { clientDataJSON: 'e30', attestationObject: 'YXR0', transports: ['internal'] },
          },
        },
      },
    ]);
  });

  test('when the person cancels, the device already has one, or the service refuses, then a refused SvcIdentityError says so', async () => {
    answer = (url) => (url.endsWith('registration-options') ? [200, options] : [422, { message: 'Passkey not accepted: origin' }]);
    const failing = (name: string) => ({
      create: async () => {
        throw Object.assign(new Error('x'), { name });
      },
    });
    const make = (credentials: { create: () => Promise<Credential | null> }) =>
      new Passkeys({ serviceUrl: base, getAccessToken: () => 'tok', credentials }).register();
    await expect(make(failing('NotAllowedError'))).rejects.toMatchObject({
      kind: 'refused',
      operation: 'RegisterPasskey',
      message: expect.stringMatching(/cancelled/),
    });
    await expect(make(failing('InvalidStateError'))).rejects.toMatchObject({
      message: 'this device already holds a passkey for this account',
    });
    const ok = {
      create: async () =>
        ({
          id: 'eA',
          rawId: bytes('x'),
          type: 'public-key',
          response: { clientDataJSON: bytes('{}'), attestationObject: bytes('a') },
        }) as unknown as Credential,
    };
    await expect(make(ok)).rejects.toMatchObject({ kind: 'refused', status: 422, code: 4, message: 'Passkey not accepted: origin' });
  });

  test('when the list is read, a passkey removed, or the user is blocked, then the answers map as documented', async () => {
    answer = (url) =>
      url === '/v1/me/passkeys'
        ? [200, [{ id: 'p-1' }]]
        : url.endsWith('/p%2F1')
          ? [204, undefined]
          : [403, { error: 'user_blocked', error_description: 'User is blocked', code: 141 }];
    const passkeys = new Passkeys({ serviceUrl: base, getAccessToken: async () => 'tok' });
    expect(await passkeys.list()).toEqual([{ id: 'p-1' }]);
    await passkeys.remove('p/1');
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/me/passkeys', 'DELETE /v1/me/passkeys/p%2F1']);
    const blocked = await passkeys.remove('other').catch((err: unknown) => err);
    expect(blocked).toBeInstanceOf(SvcIdentityError);
    expect(blocked).toMatchObject({ kind: 'refused', code: 141, operation: 'RemovePasskey', message: 'User is blocked' });
  });

  test('when the sign-in is too old to add a passkey, then sign-in-again with the maxAge to sign in with', async () => {
    answer = () => [
      401,
      {
        error: 'insufficient_user_authentication',
        error_description: 'Adding a passkey needs a recent sign-in: sign in again',
        max_age: 300,
        code: 39,
      },
    ];
    const passkeys = new Passkeys({ serviceUrl: base, getAccessToken: async () => 'tok', credentials: { create: async () => null } });
    await expect(passkeys.register()).rejects.toMatchObject({
      kind: 'sign-in-again',
      status: 401,
      code: 39,
      operation: 'RegisterPasskey',
      message: 'Adding a passkey needs a recent sign-in: sign in again',
      details: { error: 'insufficient_user_authentication', maxAge: 300 },
    });
  });
});
