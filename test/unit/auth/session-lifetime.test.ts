import { sessionLifetimeFromSignIn } from '../../../api/auth-server/session-lifetime.js';

describe('the browser session lifetime', () => {
  const now = 1_800_000_000;
  const ttl = sessionLifetimeFromSignIn(3600, 900, () => now * 1000);

  test('when the session has no sign-in (the token of a sign-out form), then it lives as long as a sign-in page', () => {
    expect(ttl(undefined, {})).toBe(900);
    expect(sessionLifetimeFromSignIn(600, 900, () => now * 1000)(undefined, {})).toBe(600);
  });

  test('when the session is saved again 1000 s after its sign-in, then what is left of the TTL from that sign-in', () => {
    expect(ttl(undefined, { loginTs: now - 1000 })).toBe(2600);
  });

  test('when the session is at or past its end, then one second (the provider takes positive seconds only)', () => {
    expect(ttl(undefined, { loginTs: now - 3600 })).toBe(1);
    expect(ttl(undefined, { loginTs: now - 9000 })).toBe(1);
  });
});
