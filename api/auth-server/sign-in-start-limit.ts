import { AsyncLocalStorage } from 'node:async_hooks';
import type Provider from 'oidc-provider';
import type { RateLimitedError } from '../../core/platform/errors/app-error.js';
import type { SignInStartLimits } from '../../core/sign-in/sign-in-start-limits.js';
import type { CallerAddress } from '../caller-address.js';
import { toHttpRefusal } from '../errors/http-error-mapping.js';

/** A request's context as the provider's own middleware gets it (before routing it has no `oidc`). */
type ProviderContext = Parameters<Parameters<Provider['use']>[0]>[0];

export interface SignInStartLimitOptions {
  limits: SignInStartLimits;
  callerAddress: CallerAddress;
  /** The authorization endpoint's path under the provider's mount path (resume is under it). */
  authorizationPath: string;
  /** The 429 page, in the language the provider's other pages use. */
  refusalPage: (oidcCtx: ProviderContext, refusal: RateLimitedError) => { html: string; csp: string };
}

/**
 * Counts every interaction the provider stores against the address of the request that made it
 * (core/sign-in/sign-in-start-limits.ts), and refuses authorization requests (and resumes) from
 * an address whose budget is spent with the sign-in pages' 429 page and Retry-After, before the
 * provider reads or writes anything for them. The refusal is a page, not an OAuth error sent to
 * the redirect URI: before routing the redirect URI is not checked yet.
 *
 * The count runs beside the interaction's save, so a sign-in under budget waits for no extra
 * round trip; checking the budget is a look in this process's memory.
 */
export function limitSignInStarts(provider: Provider, options: SignInStartLimitOptions): void {
  const { limits, callerAddress, authorizationPath, refusalPage } = options;
  const caller = new AsyncLocalStorage<{ address: string }>();
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
    if (refusal) return refuse(oidcCtx, refusal);
    return caller.run({ address }, next);
  });

  const InteractionClass = provider.Interaction as unknown as { prototype: { save: (ttl?: number) => Promise<unknown> } };
  const save = InteractionClass.prototype.save;
  InteractionClass.prototype.save = async function savedAndCounted(this: unknown, ttl?: number) {
    const request = caller.getStore();
    if (!request) return save.call(this, ttl);
    const [saved] = await Promise.all([save.call(this, ttl), limits.count(request.address)]);
    return saved;
  };

  function refuse(oidcCtx: ProviderContext, refusal: RateLimitedError): void {
    const page = refusalPage(oidcCtx, refusal);
    oidcCtx.status = 429;
    oidcCtx.set(toHttpRefusal(refusal)?.headers ?? {});
    oidcCtx.type = 'html';
    oidcCtx.set('Content-Security-Policy', page.csp);
    oidcCtx.set('Cache-Control', 'no-store');
    oidcCtx.body = page.html;
  }
}
