import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { registerClient } from '../../core/clients/clients.service.js';
import { answerError } from '../../api/errors/error-pipeline.js';
import type { EdgeStep } from '../../api/middleware/edge-step.js';
import { requestLogging } from '../../api/middleware/request-logging.js';
import { serveTokenRequestsFirst } from '../../api/token-lane.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { eventually } from '../support/waiting.js';

const TOKEN_PATH = '/svc/authserver/oauth/token';

describe('token lane: token requests reach the authorization server without Express', () => {
  describe('on an app of its own', () => {
    const { logger, lines } = memoryLogger();
    let server: Server;
    let url: string;
    let failNextServe: Error | undefined;
    let stepFailure: Error | undefined;
    const refuseWhenAsked: EdgeStep = (_req, _res, next) => next(stepFailure);

    beforeAll(async () => {
      const app = express();
      const steps = [requestLogging(logger), refuseWhenAsked];
      for (const step of steps) app.use(step);
      app.all('/token', (_req, res) => {
        res.type('text/plain').send('express');
      });
      serveTokenRequestsFirst(app, {
        path: '/token',
        steps,
        serve: async (_req, res) => {
          if (failNextServe) throw failNextServe;
          res.setHeader('Content-Type', 'text/plain');
          res.end('lane');
        },
        fail: answerError(logger),
      });
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterEach(() => {
      failNextServe = undefined;
      stepFailure = undefined;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    test('when a POST names exactly the token path, then the lane serves it after the same first steps', async () => {
      const res = await fetch(`${url}/token`, { method: 'POST', headers: { 'x-request-id': 'lane-1' } });
      expect(await res.text()).toBe('lane');
      expect(res.headers.get('x-request-id')).toBe('lane-1');
      expect(
        await eventually(async () => lines().find((line) => (line.req as { id?: string } | undefined)?.id === 'lane-1')),
      ).toMatchObject({
        msg: 'request completed',
        req: { method: 'POST', path: '/token' },
        res: { statusCode: 200 },
      });
    });

    test('when the method differs or the URL has a query, then Express serves it', async () => {
      expect(await (await fetch(`${url}/token`)).text()).toBe('express');
      expect(await (await fetch(`${url}/token?x=1`, { method: 'POST' })).text()).toBe('express');
      expect(await (await fetch(`${url}/token/`, { method: 'POST' })).text()).toBe('express');
    });

    test('when the store cannot be reached, then the lane answers 503 with Retry-After in the error body, and logs it with the request id', async () => {
      failNextServe = Object.assign(new Error('connect ECONNREFUSED'), { name: 'MongoNetworkError' });
      const res = await fetch(`${url}/token`, { method: 'POST', headers: { 'x-request-id': 'lane-503' } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await res.json()).toEqual({
        timestamp: expect.any(String),
        status: 503,
        error: 'Service Unavailable',
        message: 'Service unavailable: the database is not reachable; retry later',
        path: '/token',
      });
      const ofRequest = () => lines().filter((line) => (line.req as { id?: string } | undefined)?.id === 'lane-503');
      await eventually(async () => (ofRequest().length >= 2 ? true : undefined));
      expect(ofRequest().map((line) => line.msg)).toEqual(['database unavailable', 'request errored']);
    });

    test('when a first step refuses, then the lane answers that error and never serves', async () => {
      stepFailure = new Error('step broke');
      const res = await fetch(`${url}/token`, { method: 'POST' });
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ status: 500, error: 'Internal Server Error', errorId: expect.any(String) });
    });
  });

  describe('in the service', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService('token-lane');
    });
    afterAll(async () => {
      await service.close();
    });

    async function tokenRequest(path: string, requestId: string, creds: { clientId: string; clientSecret: string }) {
      const basic = Buffer.from(`${encodeURIComponent(creds.clientId)}:${encodeURIComponent(creds.clientSecret)}`).toString('base64');
      return fetch(`${service.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': requestId },
        body: 'grant_type=client_credentials&scope=otp',
      });
    }

    // Headers whose values belong to one answer, not to the route.
    const OWN_VALUES = new Set(['date', 'x-request-id', 'content-length']);
    const headersOf = (res: Response) => [...res.headers].filter(([name]) => !OWN_VALUES.has(name));

    test('when the service listens, then its app sends token requests down the lane first', () => {
      const app = service.server.listeners('request').find((listener) => 'handle' in listener) as unknown as { handle: { name: string } };
      expect(app.handle.name).toBe('tokenLaneFirst');
    });

    test('when the same grant is served by the lane and by Express, then the answers, log lines and metric are the same', async () => {
      const { client, clientSecret } = await registerClient(service.services.clients, { name: 'lane', scopes: ['otp'] });
      const creds = { clientId: client.clientId, clientSecret: clientSecret as string };
      const byLane = await tokenRequest(TOKEN_PATH, 'by-lane', creds);
      // A query string sends the same request through Express; the provider reads a token request's body only.
      const byExpress = await tokenRequest(`${TOKEN_PATH}?through=express`, 'by-express', creds);
      expect(byLane.status).toBe(200);
      expect(byExpress.status).toBe(200);
      expect(headersOf(byLane)).toEqual(headersOf(byExpress));
      expect(headersOf(byLane)).toEqual(expect.arrayContaining([['cache-control', 'no-store']]));
      expect(byLane.headers.get('x-request-id')).toBe('by-lane');
      expect(Object.keys((await byLane.json()) as object).sort()).toEqual(Object.keys((await byExpress.json()) as object).sort());

      const lineOf = (id: string) => service.logLines().find((line) => (line.req as { id?: string } | undefined)?.id === id);
      const expected = { msg: 'request completed', req: { method: 'POST', path: TOKEN_PATH }, res: { statusCode: 200 } };
      expect(await eventually(async () => lineOf('by-lane'))).toMatchObject(expected);
      expect(await eventually(async () => lineOf('by-express'))).toMatchObject(expected);

      const scrape = await (await fetch(`${service.url}/metrics`)).text();
      expect(scrape).toContain(`http_request_duration_seconds_count{method="POST",route="${TOKEN_PATH}",status="200"} 2`);
    });

    test('when an unknown client asks, then the lane answers the provider refusal Express would', async () => {
      const creds = { clientId: 'nobody', clientSecret: 'x' };
      const byLane = await tokenRequest(TOKEN_PATH, 'lane-401', creds);
      const byExpress = await tokenRequest(`${TOKEN_PATH}?through=express`, 'express-401', creds);
      expect(byLane.status).toBe(401);
      expect(headersOf(byLane)).toEqual(headersOf(byExpress));
      expect(await byLane.json()).toEqual(await byExpress.json());
    });
  });
});
