import type { Request } from 'express';
import { ConflictError, UnavailableError } from '../../../core/platform/errors/app-error.js';
import { errorPageOf, errorResponseOf, STORE_RETRY_AFTER_SECONDS } from '../../../api/errors/error-pipeline.js';
import { memoryLogger } from '../../support/test-service.js';

const request = (url: string) => ({ originalUrl: url, path: url.split('?')[0] }) as unknown as Request;

/** A driver error as MongoDB raises it when no server answers. */
const storeDown = () => Object.assign(new Error('Server selection timed out after 1000 ms'), { name: 'MongoServerSelectionError' });

describe('the error pipeline', () => {
  test('when a store cannot be reached, then 503 with Retry-After and a warning, never an unexpected 500', () => {
    const { logger, lines } = memoryLogger();
    const response = errorResponseOf(storeDown(), request('/v1/me/notifications?x=1'), logger);
    expect(response.status).toBe(503);
    expect(response.headers).toEqual({ 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) });
    expect(response.body).toMatchObject({
      path: '/v1/me/notifications',
      message: 'Service unavailable: the database is not reachable; retry later',
    });
    expect(lines().map((l) => l.msg)).toEqual(['database unavailable']);
  });

  test('when a store cannot be reached, then the warning names the error that said so, a cause included, and its code', () => {
    const { logger, lines } = memoryLogger();
    const closed = Object.assign(new Error('connection 7 to 127.0.0.1:27017 closed'), { name: 'MongoNetworkError' });
    const wrapped = Object.assign(new Error('Operation failed', { cause: closed }), { name: 'MongooseError' });
    const steppedDown = Object.assign(new Error('not primary'), { name: 'MongoServerError', code: 10107 });
    expect(errorResponseOf(wrapped, request('/v1/svc-otp/x/validate'), logger).status).toBe(503);
    expect(errorResponseOf(steppedDown, request('/v1/svc-otp/x/validate'), logger).status).toBe(503);
    expect(lines().map(({ msg, err, errName, errCode }) => ({ msg, err, errName, errCode }))).toEqual([
      { msg: 'database unavailable', err: 'Operation failed', errName: 'MongoNetworkError', errCode: undefined },
      { msg: 'database unavailable', err: 'not primary', errName: 'MongoServerError', errCode: 10107 },
    ]);
  });

  test('when a body parser refuses, then its documented refusal', () => {
    const response = errorResponseOf({ type: 'entity.too.large' }, request('/v1/users'), memoryLogger().logger);
    expect(response.status).toBe(413);
    expect(response.body.message).toBe('Request body is too large');
  });

  test('when a sign-in page fails, then the HTML answer is at least a 500 with a logged reference, and a store outage keeps its 503 and Retry-After', () => {
    const { logger, lines } = memoryLogger();
    const refused = errorPageOf(new ConflictError('changed meanwhile'), request('/svc/authserver/interaction/abc'), logger);
    expect(refused).toEqual({ status: 500, headers: {}, errorId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(lines().find((l) => l.msg === 'sign-in page failed')?.errorId).toBe(refused.errorId);
    const down = errorPageOf(storeDown(), request('/svc/authserver/interaction/abc'), logger);
    expect(down).toMatchObject({ status: 503, headers: { 'Retry-After': '5' } });
    expect(errorPageOf(new UnavailableError('busy', { retryAfterSeconds: 1 }), request('/x'), logger)).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '1' },
    });
  });
});
