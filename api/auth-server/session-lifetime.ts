/**
 * The browser session's TTL each time the provider saves it: what is left of `ttlSeconds`
 * counted from the sign-in that made it (`loginTs`). The provider saves a session again with
 * its whole TTL whenever a request uses it, so a session some app used at least once per TTL
 * (a silent `prompt=none` every hour) would never end: an idle timeout only. Counting from the
 * sign-in gives the absolute lifetime the setting names (OWASP session management: an absolute
 * timeout whatever the activity); signing in again (prompt=login, max_age) starts it over.
 */
export function sessionLifetimeFromSignIn(ttlSeconds: number, nowMs: () => number = Date.now) {
  return (_ctx: unknown, session: { loginTs?: number }): number => {
    if (typeof session.loginTs !== 'number') return ttlSeconds;
    const left = session.loginTs + ttlSeconds - Math.floor(nowMs() / 1000);
    // The provider takes positive whole seconds only; a session at its end is saved for the last one.
    return Math.max(1, left);
  };
}
