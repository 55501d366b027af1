import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { notFoundHandler } from '../../api/middleware/error-handler.js';
import { errorHandler } from '../../api/errors/error-pipeline.js';
import { requestLogging } from '../../api/middleware/request-logging.js';
import { memoryLogger } from '../support/test-service.js';

// The edge's error handling, on a small app with the real middleware and body parser.
describe('error handling at the edge', () => {
  const { logger, lines } = memoryLogger();
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const app = express();
    app.use(requestLogging(logger));
    app.post('/echo', express.json({ limit: '1kb' }), (req, res) => {
      res.json(req.body);
    });
    app.get('/boom', () => {
      throw new Error('connection string mongodb://user:pw@db leaked');
    });
    app.use(notFoundHandler());
    app.use(errorHandler(logger));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const stamp = expect.stringMatching(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);

  test('when the JSON is malformed, then 400 Malformed request body', async () => {
    const res = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      timestamp: stamp,
      status: 400,
      error: 'Bad Request',
      message: 'Malformed request body',
      path: '/echo',
    });
  });

  test('when the body is over the limit, then 413 in the same shape', async () => {
    const res = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 'x'.repeat(5000) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      timestamp: stamp,
      status: 413,
      error: 'Payload Too Large',
      message: 'Request body is too large',
      path: '/echo',
    });
  });

  test('when a handler throws, then 500 with an error id that is also logged, and no stack', async () => {
    const res = await fetch(`${url}/boom`, { headers: { 'x-request-id': 'req-123' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBe('req-123');
    const body = (await res.json()) as Record<string, string>;
    expect(body).toEqual({
      timestamp: stamp,
      status: 500,
      error: 'Internal Server Error',
      message: `Unexpected error; reference ${body.errorId}`,
      path: '/boom',
      errorId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(JSON.stringify(body)).not.toContain('leaked');
    const logged = lines().find((line) => line.errorId === body.errorId);
    expect(logged).toMatchObject({ msg: 'unexpected error', req: { id: 'req-123' } });
  });

  test('when the process served an error, then it keeps serving', async () => {
    const res = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":true}' });
    expect(await res.json()).toEqual({ ok: true });
  });
});
