import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';

const errorBody = (status: number, error: string, message: string, path: string) => ({
  timestamp: expect.any(String),
  status,
  error,
  message,
  path,
});

/** Sends only the request head (and `firstBytes` of the body) and returns what the server answers meanwhile. */
function answerToHead(url: string, path: string, headers: Record<string, string>, firstBytes = ''): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer before the body was sent; got: ${answer}`));
    }, 5000);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer.includes('\r\n\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    const head = Object.entries({ host: `${hostname}:${port}`, ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n${firstBytes}`);
  });
}

describe('request bodies: corrupt encodings, per-route limits, cheap refusals on public routes', () => {
  let service: TestService;
  let admin: string;
  beforeAll(async () => {
    service = await startTestService('reqbodies', { RATE_LIMIT_ACTIVATE_PER_IP: '10000', RATE_LIMIT_ACTIVATE_PER_USER: '10000' });
    admin = service.config.adminToken as string;
  });
  afterAll(async () => {
    await service.close();
  });

  const errorLines = () => service.logLines().filter((line) => Number(line.level) >= 50);

  test.each([['gzip'], ['deflate'], ['br']])(
    'when a %s body does not decompress, then the answer is 400 Malformed request body and nothing is logged as an error',
    async (encoding) => {
      const before = errorLines().length;
      for (const path of ['/v1/users/activate', '/admin/clients']) {
        const res = await fetch(`${service.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'content-encoding': encoding },
          body: Buffer.from('this is not compressed data at all, just bytes'),
        });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual(errorBody(400, 'Bad Request', 'Malformed request body', path));
      }
      expect(errorLines().length).toBe(before);
    },
  );

  test.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('when a %s body decompresses, then it is read as JSON', async (encoding, compress) => {
    const res = await fetch(`${service.url}/admin/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'content-encoding': encoding },
      body: compress(Buffer.from(JSON.stringify({ name: `grp_${encoding}` }))),
    });
    expect(res.status).toBe(201);
  });

  test('when a JSON route gets an empty body (Content-Length: 0), then every such route answers 400 Malformed request body', async () => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['users', 'otp', 'notifications'] });
    const routes: [method: string, path: string, bearer?: string][] = [
      ['POST', '/v1/users', accessToken],
      ['PATCH', '/v1/users/someone', accessToken],
      ['POST', '/v1/users/activate'],
      ['POST', '/v1/svc-otp', accessToken],
      ['POST', '/v1/svc-otp/0e6f1a4e-8f5c-4d0f-9d7e-2f1f0e5a9b11/validate', accessToken],
      ['POST', '/v1/notifications', accessToken],
      ['POST', '/admin/clients', admin],
      ['PATCH', '/admin/clients/some-client', admin],
      ['POST', '/admin/groups', admin],
      ['POST', '/admin/templates', admin],
      ['PUT', '/admin/templates/some_template', admin],
      ['PUT', '/admin/users/someone/blocked', admin],
      ['POST', '/admin/deliveries/replay', admin],
    ];
    for (const [method, path, bearer] of routes) {
      const res = await fetch(`${service.url}${path}`, {
        method,
        headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), 'content-type': 'application/json', 'content-length': '0' },
        body: '',
      });
      expect([method, path, res.status, await res.json()]).toEqual([
        method,
        path,
        400,
        errorBody(400, 'Bad Request', 'Malformed request body', path),
      ]);
    }
  });

  test('when an empty JSON body comes chunked, compressed or without any length, then it is 400 too, and without a JSON type still 415', async () => {
    const json = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
    expect(await answerToHead(service.url, '/admin/groups', { ...json, 'transfer-encoding': 'chunked' }, '0\r\n\r\n')).toMatch(
      /^HTTP\/1\.1 400 /,
    );
    expect(await answerToHead(service.url, '/admin/groups', json)).toMatch(/^HTTP\/1\.1 400 /);
    expect(await answerToHead(service.url, '/admin/groups', { authorization: `Bearer ${admin}` })).toMatch(/^HTTP\/1\.1 415 /);
    const gzipped = await fetch(`${service.url}/admin/groups`, {
      method: 'POST',
      headers: { ...json, 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.alloc(0)),
    });
    expect(gzipped.status).toBe(400);
    expect(await gzipped.json()).toEqual(errorBody(400, 'Bad Request', 'Malformed request body', '/admin/groups'));
  });

  test('when a JSON body above 64 kB reaches a route without images, then it is 413 (and a compressed one is measured inflated)', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(70 * 1024), scopes: ['otp'] });
    for (const [encoding, body] of [
      ['identity', Buffer.from(big)],
      ['gzip', gzipSync(Buffer.from(big))],
    ] as const) {
      const res = await fetch(`${service.url}/admin/clients`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'content-encoding': encoding },
        body,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual(errorBody(413, 'Payload Too Large', 'Request body is too large', '/admin/clients'));
    }
  });

  test('when an enrollment carries a selfie of several megabytes, then the body is read (the image is judged, not the size)', async () => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'] });
    const res = await fetch(`${service.url}/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'big.selfie', selfieImage: 'A'.repeat(3 * 1024 * 1024) }),
    });
    expect(res.status).not.toBe(413);
    expect([400, 422]).toContain(res.status);
  });

  test('when activation declares a multi-megabyte body, then 413 comes back before the body is sent', async () => {
    const answer = await answerToHead(
      service.url,
      '/v1/users/activate',
      { 'content-type': 'application/json', 'content-length': String(7 * 1024 * 1024) },
      '{"userId":"',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  });

  test('when activation sends a body above 64 kB without declaring its length (chunked), then it is 413', async () => {
    const res = await fetch(`${service.url}/v1/users/activate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Blob([JSON.stringify({ userId: 'x', activationCode: 'y'.repeat(100 * 1024) })]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  test('when a form posts more fields than its route takes (the sign-in page, the replay page), then it is 413 and nothing is logged as an error', async () => {
    const before = errorLines().length;
    const fields = new URLSearchParams(Array.from({ length: 200 }, (_, i): [string, string] => [`field${i}`, 'x']));
    for (const [path, headers] of [
      ['/svc/authserver/interaction/not-a-real-uid', {}],
      ['/admin/delivery-replay/preview', { authorization: `Bearer ${admin}`, origin: service.url }],
    ] as const) {
      const res = await fetch(`${service.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: fields.toString(),
      });
      expect({ path, status: res.status }).toEqual({ path, status: 413 });
    }
    expect(errorLines().length).toBe(before);
  });
});

describe('the activation rate limit per address runs before the body is read', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('reqbodiesrl', { RATE_LIMIT_ACTIVATE_PER_IP: '3', RATE_LIMIT_ACTIVATE_PER_IP_WINDOW_SECONDS: '600' });
  });
  afterAll(async () => {
    await service.close();
  });

  test('when one address keeps sending bodies that are not even JSON, then after the limit it gets 429 without its bodies being parsed', async () => {
    const send = () =>
      fetch(`${service.url}/v1/users/activate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await send()).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
    const answer = await answerToHead(service.url, '/v1/users/activate', { 'content-type': 'application/json', 'content-length': '100' });
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer.toLowerCase()).toContain('retry-after:');
  });
});
