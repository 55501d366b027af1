import { sessionLifetimeFromSignIn } from '../../../api/auth-server/session-lifetime.js';

describe('the browser session lifetime', () => {
  const now = 1_800_000_000;
  const ttl = sessionLifetimeFromSignIn(3600, () => now * 1000);

  test('when the session has no sign-in yet, then it gets the whole TTL', () => {
    expect(ttl(undefined, {})).toBe(3600);
  });

  test('when the session is saved again 1000 s after its sign-in, then what is left of the TTL from that sign-in', () => {
    expect(ttl(undefined, { loginTs: now - 1000 })).toBe(2600);
  });

  test('when the session is at or past its end, then one second (the provider takes positive seconds only)', () => {
    expect(ttl(undefined, { loginTs: now - 3600 })).toBe(1);
    expect(ttl(undefined, { loginTs: now - 9000 })).toBe(1);
  });
});
