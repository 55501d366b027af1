import { AsyncLocalStorage } from 'node:async_hooks';
import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { RateLimitedError } from '../../core/platform/errors/app-error.js';
import type { SignInStartLimits } from '../../core/sign-in/sign-in-start-limits.js';
import type { CallerAddress } from '../caller-address.js';
import { toHttpRefusal } from '../errors/http-error-mapping.js';

/** A request's context as the provider's own middleware gets it (before routing it has no `oidc`). */
type ProviderContext = Parameters<Parameters<Provider['use']>[0]>[0];

type AdapterClass = new (name: string) => Adapter;

export interface SignInStartRefusalOptions {
  callerAddress: CallerAddress;
  /** The authorization endpoint's path under the provider's mount path (resume is under it). */
  authorizationPath: string;
  /** The sign-out endpoint's path under the provider's mount path (its confirmation is under it). */
  endSessionPath: string;
  /** The 429 page, in the language the provider's other pages use. */
  refusalPage: (oidcCtx: ProviderContext, refusal: RateLimitedError) => { html: string; csp: string };
}

/** The records each of the provider's pages stores for a caller, counted against its address. */
type CountedRecord = 'Interaction' | 'Session';

/**
 * Counts every interaction the provider stores while serving an authorization request (or its
 * resume), and every session it stores while serving the sign-out page (or its confirmation),
 * against the address of that request (core/sign-in/sign-in-start-limits.ts), and refuses those
 * requests from an address whose budget is spent with the sign-in pages' 429 page and
 * Retry-After, before the provider reads or writes anything for them. The refusal is a page,
 * not an OAuth error sent to the redirect URI: before routing the redirect URI is not checked yet.
 *
 * The sign-out page stores a session for its form's CSRF token even for a caller that has none
 * (no cookie, or one naming no session), kept for the session's whole lifetime: without the
 * count one address could store sessions at will.
 *
 * The two halves meet through the request's address, which the refusing step keeps for the rest
 * of the request: the provider's storage (`countingPageRecords`) counts each record of the
 * request's kind (interaction, or sign-out session) it writes for such a request, and only for
 * such a request. The sign-in pages write the
 * interaction too (the result of a form), outside any authorization request, so those writes are
 * not counted here: the page loads count themselves (interaction.routes.ts).
 *
 * The count runs beside the record's write, so a sign-in under budget waits for no extra
 * round trip; checking the budget is a look in this process's memory.
 */
export function createSignInStartLimit(limits: SignInStartLimits) {
  const caller = new AsyncLocalStorage<{ address: string; counts: CountedRecord }>();

  return {
    /**
     * The provider's storage, counting each interaction written during an authorization request,
     * and each session written during a sign-out, against its address; every other record, and
     * every write outside such a request, as before.
     */
    countingPageRecords(Base: AdapterClass): AdapterClass {
      return class AdapterCountingPageRecords extends Base {
        private readonly model: string;
        constructor(name: string) {
          super(name);
          this.model = name;
        }
        override async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
          const request = caller.getStore();
          if (request?.counts !== this.model) return super.upsert(id, payload, expiresIn);
          await Promise.all([super.upsert(id, payload, expiresIn), limits.count(request.address)]);
        }
      };
    },

    /** Refuses authorization requests, resumes and sign-outs from spent addresses; names the address of the others. */
    refuseSpentAddresses(provider: Provider, options: SignInStartRefusalOptions): void {
      const { callerAddress, authorizationPath, endSessionPath, refusalPage } = options;
      // The router matches letters in any case and one trailing slash: so does this.
      const under = (endpointPath: string) => {
        const endpoint = endpointPath.toLowerCase();
        return (lower: string) => lower === endpoint || lower.startsWith(`${endpoint}/`);
      };
      const pages: [matches: (lower: string) => boolean, counts: CountedRecord][] = [
        [under(authorizationPath), 'Interaction'],
        [under(endSessionPath), 'Session'],
      ];
      const countedOn = (path: string): CountedRecord | undefined => {
        const lower = path.toLowerCase();
        return pages.find(([matches]) => matches(lower))?.[1];
      };

      provider.use(async (oidcCtx, next) => {
        const counts = countedOn(oidcCtx.path);
        if (!counts) return next();
        const address = callerAddress(oidcCtx.req);
        const refusal = limits.refusal(address);
        if (refusal) return refuse(oidcCtx, refusal, refusalPage);
        return caller.run({ address, counts }, next);
      });
    },
  };
}

export type SignInStartLimit = ReturnType<typeof createSignInStartLimit>;

function refuse(oidcCtx: ProviderContext, refusal: RateLimitedError, refusalPage: SignInStartRefusalOptions['refusalPage']): void {
  const page = refusalPage(oidcCtx, refusal);
  oidcCtx.status = 429;
  oidcCtx.set(toHttpRefusal(refusal)?.headers ?? {});
  oidcCtx.type = 'html';
  oidcCtx.set('Content-Security-Policy', page.csp);
  oidcCtx.set('Cache-Control', 'no-store');
  oidcCtx.body = page.html;
}
