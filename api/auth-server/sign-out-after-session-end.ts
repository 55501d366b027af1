import { AsyncLocalStorage } from 'node:async_hooks';
import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload } from 'oidc-provider';

type AdapterClass = new (name: string) => Adapter;

/**
 * The sign-out form of a session whose lifetime ended while the person read it. The sign-out page
 * stores its form's token in the session; a session ends SIGN_IN_SESSION_TTL_SECONDS after its
 * sign-in, to the millisecond (session-lifetime.ts), and is not found from then on. So a page
 * shown just before that end, posted just after, found no session and answered 400 "could not
 * find logout details": the person was not signed out, and the grants of the session that outlive
 * it (offline_access) were not ended, although the page said they would be.
 *
 * For that one request, the form's confirmation (POST `<end_session>/confirm`), the session is
 * read as the store still holds it after its end, and the provider's own sign-out runs on it:
 * its token is checked, its grants revoked, it is deleted, and the person goes back to the app
 * or sees the signed-out page. The session serves no other request: every other route still finds
 * nothing, and a confirmation that fails its token check saves the session, which deletes it, as
 * at the end (session-lifetime.ts). Only signed-in sessions (with a sign-in time) are read so.
 */
export function createSignOutAfterSessionEnd(
  findEnded: (id: string) => Promise<AdapterPayload | undefined>,
  nowMs: () => number = Date.now,
) {
  const confirming = new AsyncLocalStorage<true>();

  return {
    /** The provider's storage, reading an ended signed-in session during a sign-out confirmation only. */
    readingEndedSessionsToSignOut(Base: AdapterClass): AdapterClass {
      return class AdapterReadingEndedSessionsToSignOut extends Base {
        private readonly isSession: boolean;
        constructor(name: string) {
          super(name);
          this.isSession = name === 'Session';
        }
        override async find(id: string): Promise<AdapterPayload | undefined> {
          const found = (await super.find(id)) ?? undefined;
          if (found || !this.isSession || !confirming.getStore()) return found;
          const ended = await findEnded(id);
          if (!ended || typeof ended.loginTs !== 'number') return undefined;
          // The provider takes a session as alive up to 15 s past its `exp`: for this request it
          // is, whenever it ended (the store holds it a minute at most).
          return { ...ended, exp: Math.floor(nowMs() / 1000) + 1 };
        }
      };
    },

    /** Marks the sign-out confirmations, the requests the storage above reads ended sessions for. */
    markSignOutConfirmations(provider: Provider, endSessionPath: string): void {
      const confirmPath = `${endSessionPath}/confirm`.toLowerCase();
      provider.use(async (oidcCtx, next) => {
        // The provider's router matches letters in any case and one trailing slash: so does this.
        const path = oidcCtx.path.toLowerCase().replace(/\/$/, '');
        if (oidcCtx.method !== 'POST' || path !== confirmPath) return next();
        return confirming.run(true, next);
      });
    },
  };
}
