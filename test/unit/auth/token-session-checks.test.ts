import { TokenSessionChecks } from '../../../core/auth/token-session-checks.js';

/** A store whose sessions (by uid) the test sets, counting the reads. */
function storeWith(sessions: Map<string, Record<string, unknown>>) {
  const store = {
    reads: 0,
    findOidcRecord: async (_kind: string, by: { key: string } | { uid: string } | { userCode: string }) => {
      store.reads += 1;
      return 'uid' in by ? sessions.get(by.uid) : undefined;
    },
  };
  return store;
}

/** A session of account `a` holding grant `g1` for app `app`, ending at `exp` (epoch seconds). */
const session = (exp: number, overrides: Record<string, unknown> = {}) => ({
  uid: 's1',
  accountId: 'ent:a',
  exp,
  authorizations: { app: { sid: 'x', grantId: 'g1' } },
  ...overrides,
});
const bound = { expiresWithSession: true, sessionUid: 's1', accountId: 'ent:a', clientId: 'app', grantId: 'g1' };

describe('token session checks', () => {
  test('when a token is not bound to a session (offline_access, refreshed), then it holds without any read', async () => {
    const store = storeWith(new Map());
    const checks = new TokenSessionChecks(store, 5000);
    expect(await checks.holdsToken({ ...bound, expiresWithSession: undefined }, 1000)).toBe(true);
    expect(await checks.holdsToken({ ...bound, expiresWithSession: false }, 1000)).toBe(true);
    expect(store.reads).toBe(0);
  });

  test('when the session is there, of the same account, with the same grant for the app, then the token holds; otherwise not', async () => {
    const sessions = new Map([['s1', session(100)]]);
    const checks = new TokenSessionChecks(storeWith(sessions), 0);
    expect(await checks.holdsToken(bound, 1000)).toBe(true);
    expect(await checks.holdsToken({ ...bound, accountId: 'ent:b' }, 1000)).toBe(false);
    expect(await checks.holdsToken({ ...bound, grantId: 'g2' }, 1000)).toBe(false);
    expect(await checks.holdsToken({ ...bound, clientId: 'other-app' }, 1000)).toBe(false);
    expect(await checks.holdsToken({ ...bound, sessionUid: undefined }, 1000)).toBe(false);
    sessions.delete('s1');
    expect(await checks.holdsToken(bound, 1000)).toBe(false);
  });

  test('when checked again within the window, then the store is read once per session, whichever app asks', async () => {
    const store = storeWith(new Map([['s1', session(100, { authorizations: { app: { grantId: 'g1' }, other: { grantId: 'g9' } } })]]));
    const checks = new TokenSessionChecks(store, 5000);
    await Promise.all([checks.holdsToken(bound, 1000), checks.holdsToken(bound, 1000)]);
    expect(await checks.holdsToken(bound, 5999)).toBe(true);
    expect(await checks.holdsToken({ ...bound, clientId: 'other', grantId: 'g9' }, 3000)).toBe(true);
    expect(store.reads).toBe(1);
  });

  test('when the session reaches the end of its lifetime, then its tokens stop holding at that moment, remembered answer or not', async () => {
    const store = storeWith(new Map([['s1', session(10)]]));
    const checks = new TokenSessionChecks(store, 60000);
    expect(await checks.holdsToken(bound, 9000)).toBe(true);
    expect(await checks.holdsToken(bound, 9999)).toBe(true);
    expect(await checks.holdsToken(bound, 10000)).toBe(false);
    expect(store.reads).toBe(1);
  });

  test('when the window has passed, then a change made elsewhere (signed out, another account) is seen', async () => {
    const sessions = new Map([['s1', session(1000)]]);
    const store = storeWith(sessions);
    const checks = new TokenSessionChecks(store, 5000);
    expect(await checks.holdsToken(bound, 1000)).toBe(true);
    sessions.set('s1', session(1000, { accountId: 'ent:b' }));
    expect(await checks.holdsToken(bound, 2000)).toBe(true);
    expect(await checks.holdsToken(bound, 6000)).toBe(false);
    expect(store.reads).toBe(2);
  });

  test('when a read fails, then the check fails and the next one reads again', async () => {
    let fail = true;
    const sessions = new Map([['s1', session(1000)]]);
    const store = storeWith(sessions);
    const checks = new TokenSessionChecks(
      {
        findOidcRecord: (kind, by) => (fail ? Promise.reject(new Error('store down')) : store.findOidcRecord(kind, by)),
      },
      5000,
    );
    await expect(checks.holdsToken(bound, 1000)).rejects.toThrow('store down');
    fail = false;
    expect(await checks.holdsToken(bound, 1001)).toBe(true);
  });

  test('when more sessions are checked than it keeps, then the oldest is read again', async () => {
    const sessions = new Map(['s1', 's2', 's3'].map((uid) => [uid, session(1000, { uid })]));
    const store = storeWith(sessions);
    const checks = new TokenSessionChecks(store, 5000, 2);
    for (const uid of ['s1', 's2', 's3']) expect(await checks.holdsToken({ ...bound, sessionUid: uid }, 1000)).toBe(true);
    expect(await checks.holdsToken({ ...bound, sessionUid: 's3' }, 1000)).toBe(true);
    expect(store.reads).toBe(3);
    expect(await checks.holdsToken(bound, 1000)).toBe(true);
    expect(store.reads).toBe(4);
  });
});
