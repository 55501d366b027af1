import {
  ConflictError,
  DependencyFailedError,
  GoneError,
  LockedError,
  RateLimitedError,
  UnavailableError,
} from '../../../core/platform/errors/app-error.js';
import { BearerError, HttpError, insufficientScope } from '../../../api/errors/http-error.js';
import { formatErrorTimestamp, toErrorResponse } from '../../../api/errors/error-body.js';

const at = new Date(Date.UTC(2026, 10, 21, 23, 45, 37));

describe('error bodies', () => {
  test('when formatting a timestamp, then it reads like `Sat Nov 21 23:45:37 UTC 2026`', () => {
    expect(formatErrorTimestamp(at)).toBe('Sat Nov 21 23:45:37 UTC 2026');
    expect(formatErrorTimestamp(new Date(Date.UTC(2026, 0, 5, 3, 4, 5)))).toBe('Mon Jan 05 03:04:05 UTC 2026');
  });

  test('when an exposed error is mapped, then the body has the error body shape plus extra fields', () => {
    const err = new ConflictError('User is ACTIVE', { error: 'Invalid data.', extra: { userStatus: 'ACTIVE' } });
    expect(toErrorResponse(err, '/v1/users', at)).toEqual({
      status: 409,
      headers: {},
      body: {
        timestamp: 'Sat Nov 21 23:45:37 UTC 2026',
        status: 409,
        error: 'Invalid data.',
        message: 'User is ACTIVE',
        path: '/v1/users',
        userStatus: 'ACTIVE',
      },
    });
  });

  test('when a bearer error is mapped, then the body is the OAuth shape', () => {
    const response = toErrorResponse(new BearerError(401, 'invalid_token', 'Invalid access token: x'), '/v1/x', at);
    expect(response.body).toEqual({ error: 'invalid_token', error_description: 'Invalid access token: x' });
    expect(response.headers).toEqual({ 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  });

  test('when a missing scope is mapped, then 403 with a challenge naming the scope (RFC 6750)', () => {
    const response = toErrorResponse(insufficientScope('notifications'), '/v1/x', at);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      error: 'insufficient_scope',
      error_description: "The access token does not grant the scope 'notifications'",
    });
    expect(response.headers).toEqual({ 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="notifications"' });
  });

  test('when a 403 other than a missing scope is mapped, then no challenge', () => {
    const response = toErrorResponse(new BearerError(403, 'user_blocked', 'User is blocked', { code: 141 }), '/v1/me', at);
    expect(response.headers).toEqual({});
  });

  test('when an unexpected error is mapped, then a 500 with an error id and no internals', () => {
    const response = toErrorResponse(new Error('db password is hunter2'), '/v1/x', at);
    expect(response.status).toBe(500);
    expect(response.errorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body).toEqual({
      timestamp: 'Sat Nov 21 23:45:37 UTC 2026',
      status: 500,
      error: 'Internal Server Error',
      message: `Unexpected error; reference ${response.errorId}`,
      path: '/v1/x',
      errorId: response.errorId,
    });
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
  });

  test('when a spent budget is mapped, then 429 with Retry-After and the RateLimit headers of the budgets it carries', () => {
    const budget = { policy: 'sign-in-per-address', quota: 30, windowSeconds: 60, remaining: 0, resetSeconds: 12 };
    const response = toErrorResponse(new RateLimitedError('Too many', { retryAfterSeconds: 12, budgets: [budget] }), '/p', at);
    expect(response.status).toBe(429);
    expect(response.body).toMatchObject({ status: 429, error: 'Too Many Requests', message: 'Too many' });
    expect(response.headers).toEqual({
      'Retry-After': '12',
      'RateLimit-Policy': '"sign-in-per-address";q=30;w=60',
      RateLimit: '"sign-in-per-address";r=0;t=12',
    });
  });

  test('when an unavailable store or service is mapped, then 503 with its message, and Retry-After only when a wait is known', () => {
    const waiting = toErrorResponse(new UnavailableError('Service unavailable; retry later', { retryAfterSeconds: 5 }), '/p', at);
    expect(waiting.status).toBe(503);
    expect(waiting.body.message).toBe('Service unavailable; retry later');
    expect(waiting.headers).toEqual({ 'Retry-After': '5' });
    expect(toErrorResponse(new UnavailableError('Admin API disabled'), '/p', at).headers).toEqual({});
  });

  test('when ended, locked or failed-dependency errors are mapped, then 410, 423 and an exposed 500', () => {
    expect(toErrorResponse(new GoneError('OTP_EXPIRED', 'OTP expired'), '/p', at).body).toMatchObject({ status: 410, error: 'Gone' });
    expect(toErrorResponse(new LockedError('OTP_LOCKED', 'OTP locked'), '/p', at).body).toMatchObject({ status: 423, error: 'Locked' });
    const failed = toErrorResponse(new DependencyFailedError('X_FAILED', 'The analyzer failed.'), '/p', at);
    expect(failed.body).toMatchObject({ status: 500, error: 'Internal Server Error', message: 'The analyzer failed.' });
    expect(failed.errorId).toBeUndefined();
  });

  test('when an edge error is mapped, then its own status and headers', () => {
    const response = toErrorResponse(new HttpError('METHOD_NOT_ALLOWED', 405, 'No', { headers: { Allow: 'GET' } }), '/p', at);
    expect(response.status).toBe(405);
    expect(response.headers).toEqual({ Allow: 'GET' });
  });
});
