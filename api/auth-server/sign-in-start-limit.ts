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
  /** The 429 page, in the language the provider's other pages use. */
  refusalPage: (oidcCtx: ProviderContext, refusal: RateLimitedError) => { html: string; csp: string };
}

/**
 * Counts every interaction the provider stores while serving an authorization request (or its
 * resume) against the address of that request (core/sign-in/sign-in-start-limits.ts), and
 * refuses those requests from an address whose budget is spent with the sign-in pages' 429 page
 * and Retry-After, before the provider reads or writes anything for them. The refusal is a page,
 * not an OAuth error sent to the redirect URI: before routing the redirect URI is not checked yet.
 *
 * The two halves meet through the request's address, which the refusing step keeps for the rest
 * of the request: the provider's storage (`countingInteractions`) counts each interaction it
 * writes for such a request, and only for such a request. The sign-in pages write the
 * interaction too (the result of a form), outside any authorization request, so those writes are
 * not counted here: the page loads count themselves (interaction.routes.ts).
 *
 * The count runs beside the interaction's write, so a sign-in under budget waits for no extra
 * round trip; checking the budget is a look in this process's memory.
 */
export function createSignInStartLimit(limits: SignInStartLimits) {
  const caller = new AsyncLocalStorage<{ address: string }>();

  return {
    /**
     * The provider's storage, counting each interaction written during an authorization request
     * against its address; every other record, and every write outside such a request, as before.
     */
    countingInteractions(Base: AdapterClass): AdapterClass {
      return class AdapterCountingInteractions extends Base {
        private readonly countsWrites: boolean;
        constructor(name: string) {
          super(name);
          this.countsWrites = name === 'Interaction';
        }
        override async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
          const request = this.countsWrites ? caller.getStore() : undefined;
          if (!request) return super.upsert(id, payload, expiresIn);
          await Promise.all([super.upsert(id, payload, expiresIn), limits.count(request.address)]);
        }
      };
    },

    /** Refuses authorization requests and resumes from spent addresses; names the address of the others. */
    refuseSpentAddresses(provider: Provider, options: SignInStartRefusalOptions): void {
      const { callerAddress, authorizationPath, refusalPage } = options;
      // The router matches letters in any case and one trailing slash: so does this.
      const authorization = authorizationPath.toLowerCase();
      const startsSignIns = (path: string) => {
        const lower = path.toLowerCase();
        return lower === authorization || lower.startsWith(`${authorization}/`);
      };

      provider.use(async (oidcCtx, next) => {
        if (!startsSignIns(oidcCtx.path)) return next();
        const address = callerAddress(oidcCtx.req);
        const refusal = limits.refusal(address);
        if (refusal) return refuse(oidcCtx, refusal, refusalPage);
        return caller.run({ address }, next);
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
