import { AsyncLocalStorage } from 'node:async_hooks';
import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload } from 'oidc-provider';

type AdapterClass = new (name: string) => Adapter;

/** The kind under which a signed-in session is kept while its sign-out form is out. */
const SIGN_OUT_FORM_KIND = 'SessionSignOutForm';

/** A signed-in session holding the token of a sign-out form (the provider puts it there when it shows the page). */
const holdsSignOutForm = (payload: AdapterPayload): boolean =>
  typeof payload.loginTs === 'number' && typeof (payload.state as { secret?: unknown } | undefined)?.secret === 'string';

/**
 * The sign-out form of a session whose lifetime ended while the person read it. The sign-out page
 * stores its form's token in the session; a session ends SIGN_IN_SESSION_TTL_SECONDS after its
 * sign-in, to the millisecond (session-lifetime.ts), and is not found from then on. So a page
 * shown just before that end and posted after it found no session and answered 400 "could not
 * find logout details": the person was not signed out, and the grants of the session that
 * outlive it (offline_access) stayed, although the page said they would end.
 *
 * So a signed-in session saved with a sign-out form is also kept under a kind of its own for
 * `formSeconds` (a sign-in page's lifetime: the form is posted at once), and for the form's
 * confirmation alone (POST `<end_session>/confirm`) a session the store no longer finds is read
 * from that copy. The provider's own sign-out then runs on it: its token checked, its grants
 * revoked, the session and the copy deleted, the person sent back to the app or to the
 * signed-out page. No other request reads the copy; a confirmation with a wrong token saves the
 * session, which deletes it as at its end (session-lifetime.ts), and leaves the copy for the
 * right form. Blocking or deleting the user deletes the copy with the account's other records.
 */
export function createSignOutAfterSessionEnd(formSeconds: number, nowMs: () => number = Date.now) {
  const confirming = new AsyncLocalStorage<true>();

  return {
    /** The provider's storage, keeping sessions with a sign-out form for their confirmation after their end. */
    keepingSignOutForms(Base: AdapterClass): AdapterClass {
      return class AdapterKeepingSignOutForms extends Base {
        private readonly forms: Adapter | undefined;
        constructor(name: string) {
          super(name);
          this.forms = name === 'Session' ? new Base(SIGN_OUT_FORM_KIND) : undefined;
        }
        override async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
          await super.upsert(id, payload, expiresIn);
          // Not while confirming: the session saved then (a wrong token) is one at or past its end.
          if (this.forms && holdsSignOutForm(payload) && !confirming.getStore()) await this.forms.upsert(id, payload, formSeconds);
        }
        override async find(id: string): Promise<AdapterPayload | undefined> {
          const found = (await super.find(id)) ?? undefined;
          if (found || !this.forms || !confirming.getStore()) return found;
          const kept = (await this.forms.find(id)) ?? undefined;
          if (!kept || !holdsSignOutForm(kept)) return undefined;
          // The provider takes a session as alive up to 15 s past its `exp`: for this request it is.
          return { ...kept, exp: Math.floor(nowMs() / 1000) + 1 };
        }
        override async destroy(id: string): Promise<void> {
          await super.destroy(id);
          if (this.forms) await this.forms.destroy(id);
        }
      };
    },

    /** Marks the sign-out confirmations, the requests the storage above reads kept sessions for. */
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
