import type { Adapter, AdapterPayload } from 'oidc-provider';

type AdapterClass = new (name: string) => Adapter;

/**
 * The browser session's TTL each time the provider saves it: what is left of `ttlSeconds`
 * counted from the sign-in that made it (`loginTs`). The provider saves a session again with
 * its whole TTL whenever a request uses it, so a session some app used at least once per TTL
 * (a silent `prompt=none` every hour) would never end: an idle timeout only. Counting from the
 * sign-in gives the absolute lifetime the setting names (OWASP session management: an absolute
 * timeout whatever the activity); signing in again (prompt=login, max_age) starts it over.
 *
 * A session without a sign-in holds only the token of a sign-out form, stored for whoever loads
 * the sign-out page with no session (a form the browser posts at once): it lives
 * `withoutSignInSeconds` (a sign-in page's lifetime), not a signed-in session's day, so what
 * one address may store by loading that page (within its budget of sign-in pages) goes as fast
 * as the interactions its sign-ins store.
 */
export function sessionLifetimeFromSignIn(ttlSeconds: number, withoutSignInSeconds: number, nowMs: () => number = Date.now) {
  return (_ctx: unknown, session: { loginTs?: number }): number => {
    if (typeof session.loginTs !== 'number') return Math.min(ttlSeconds, withoutSignInSeconds);
    const left = session.loginTs + ttlSeconds - Math.floor(nowMs() / 1000);
    // The provider takes positive whole seconds only; a session at its end is saved for the last
    // one, and the storage below keeps it no longer than its end.
    return Math.max(1, left);
  };
}

/**
 * The provider's storage, keeping a signed-in session no longer than `ttlSeconds` after its
 * sign-in, to the millisecond. The TTL above cannot go below one whole second, and the provider
 * takes a stored session as alive up to its clock tolerance (15 s) past its `exp`: a session used
 * more than once a second across its end was saved again for one more second each time, found
 * again, and so never ended (whoever held its cookie got new codes and tokens for ever). A save
 * at or after the end deletes the session instead; every other record is stored as before.
 */
export function sessionsEndingWithTheirLifetime(Base: AdapterClass, ttlSeconds: number, nowMs: () => number = Date.now): AdapterClass {
  return class AdapterEndingSessions extends Base {
    private readonly isSession: boolean;
    constructor(name: string) {
      super(name);
      this.isSession = name === 'Session';
    }
    override async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const loginTs = (payload as { loginTs?: unknown }).loginTs;
      if (!this.isSession || typeof loginTs !== 'number') return super.upsert(id, payload, expiresIn);
      const leftSeconds = loginTs + ttlSeconds - nowMs() / 1000;
      if (leftSeconds <= 0) return super.destroy(id);
      return super.upsert(id, payload, Math.min(expiresIn, leftSeconds));
    }
  };
}
