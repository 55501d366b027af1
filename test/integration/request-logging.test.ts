import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { requestLogging } from '../../api/middleware/request-logging.js';
import { memoryLogger } from '../support/test-service.js';
import { eventually } from '../support/waiting.js';

// The access log on a small app with Node's real HTTP server: one line per answer.
describe('access log', () => {
  const { logger, lines } = memoryLogger();
  let server: Server;
  let url: string;
  let received: () => void = () => undefined;
  beforeAll(async () => {
    const app = express();
    app.use(requestLogging(logger));
    app.get('/healthz', (_req, res) => {
      res.send('ok');
    });
    app.get('/v1/users/:id', (_req, res) => {
      res.status(204).end();
    });
    app.get('/fails', (_req, res) => {
      res.status(503).end();
    });
    // Never answers: the caller gives up.
    app.get('/hangs', () => received());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const lineOf = (id: string) => eventually(async () => lines().find((line) => (line.req as { id?: string } | undefined)?.id === id));

  test('when an answer is written, then one line names the request id, method, masked path without query, status and time', async () => {
    const res = await fetch(`${url}/v1/users/jane@example.com?secret=1`, { headers: { 'x-request-id': 'log-1' } });
    expect(res.headers.get('x-request-id')).toBe('log-1');
    const line = await lineOf('log-1');
    expect(line).toEqual(
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        req: { id: 'log-1', method: 'GET', path: '/v1/users/j***@example.com' },
        res: { statusCode: 204 },
        responseTime: expect.any(Number),
      }),
    );
    expect(lines().filter((l) => (l.req as { id?: string } | undefined)?.id === 'log-1')).toHaveLength(1);
  });

  test('when the caller sends a malformed request id, then a new one is made and echoed', async () => {
    const res = await fetch(`${url}/v1/users/u1`, { headers: { 'x-request-id': 'bad id with spaces' } });
    const id = res.headers.get('x-request-id') ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lineOf(id)).toMatchObject({ req: { id, path: '/v1/users/u1' } });
  });

  test('when the answer is 500 or above, then the line is at error level', async () => {
    await fetch(`${url}/fails`, { headers: { 'x-request-id': 'log-503' } });
    expect(await lineOf('log-503')).toMatchObject({ level: 50, msg: 'request errored', res: { statusCode: 503 } });
  });

  test('when the caller leaves before the answer, then the line says so and names no status', async () => {
    const arrived = new Promise<void>((resolve) => (received = resolve));
    const leaving = new AbortController();
    const call = fetch(`${url}/hangs`, { headers: { 'x-request-id': 'log-gone' }, signal: leaving.signal }).catch(() => undefined);
    await arrived;
    leaving.abort();
    await call;
    const line = await lineOf('log-gone');
    expect(line).toMatchObject({ msg: 'request aborted', req: { id: 'log-gone', path: '/hangs' } });
    expect(line).not.toHaveProperty('res');
  });

  test('when a probe asks /healthz, then it gets a request id but no line', async () => {
    const res = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'log-probe' } });
    expect(res.headers.get('x-request-id')).toBe('log-probe');
    await res.text();
    // A later request's line is written after the probe's answer was done with.
    await fetch(`${url}/v1/users/u2`, { headers: { 'x-request-id': 'log-after' } });
    await lineOf('log-after');
    expect(lines().some((line) => (line.req as { id?: string } | undefined)?.id === 'log-probe')).toBe(false);
  });
});
