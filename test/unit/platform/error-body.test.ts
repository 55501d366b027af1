import { AppError, BearerError, ConflictError, insufficientScope } from '../../../core/platform/errors/app-error.js';
import { formatErrorTimestamp, toErrorResponse } from '../../../core/platform/errors/error-body.js';

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

  test('when an unexposed 503 AppError is mapped, then its message stays hidden', () => {
    const response = toErrorResponse(new AppError('X', 502, 'upstream said secret things', { expose: false }), '/p', at);
    expect(response.status).toBe(502);
    expect(response.body.message).toMatch(/^Unexpected error; reference /);
  });
});
