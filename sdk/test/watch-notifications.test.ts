import { jest } from '@jest/globals';
import { NotificationClient, SvcIdentityError } from '../src/index.js';

/** Longer than every reconnection wait put together until the waits reach their one-minute cap. */
const TEN_MINUTES = 10 * 60_000;

/**
 * watchNotifications() against a stand-in fetch whose stream is always refused, on a fake clock:
 * which refusals end the watch and which are waited out and tried again.
 */
describe('watchNotifications', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A client whose every stream request gets this answer; `requests` counts them. */
  function refusedWith(status: number, body: Record<string, unknown>) {
    const requests: string[] = [];
    const fetchStub: typeof fetch = async (input) => {
      requests.push(String(input));
      return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    };
    const client = new NotificationClient({ serviceUrl: 'https://id.example.com', getAccessToken: () => 'token', fetch: fetchStub });
    const errors: SvcIdentityError[] = [];
    client.on('error', (error) => errors.push(error));
    return { client, requests, errors };
  }

  test('when the service answers that the user is blocked (403 user_blocked, code 141), then the watch emits that error once and stops', async () => {
    const { client, requests, errors } = refusedWith(403, { error: 'user_blocked', error_description: 'User is blocked', code: 141 });
    const watch = client.watchNotifications();
    await jest.advanceTimersByTimeAsync(TEN_MINUTES);
    watch.stop();
    expect(requests).toEqual(['https://id.example.com/v1/me/notifications/stream']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ operation: 'WatchNotifications', kind: 'refused', code: 141, status: 403 });
  });

  test('when the token is refused (401), then the watch emits sign-in-again once and stops', async () => {
    const { client, requests, errors } = refusedWith(401, { error: 'invalid_token', error_description: 'Invalid access token', code: 39 });
    const watch = client.watchNotifications();
    await jest.advanceTimersByTimeAsync(TEN_MINUTES);
    watch.stop();
    expect(requests).toHaveLength(1);
    expect(errors.map((error) => [error.kind, error.code])).toEqual([['sign-in-again', 39]]);
  });

  test('when the service is unavailable (503), then the watch keeps reconnecting, waiting longer each time up to a minute', async () => {
    const { client, requests, errors } = refusedWith(503, { status: 503, error: 'Service Unavailable', message: 'retry later', code: 39 });
    const watch = client.watchNotifications();
    await jest.advanceTimersByTimeAsync(TEN_MINUTES);
    watch.stop();
    // Again after 6, 12, 24 and 48 s, then every minute: at 0, 6, 18, 42, 90, 150, ..., 570 s.
    expect(requests).toHaveLength(13);
    expect(errors).toHaveLength(13);
    expect(errors.every((error) => error.kind === 'network' && error.code === 39)).toBe(true);
  });
});
