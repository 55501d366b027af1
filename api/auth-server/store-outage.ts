import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { errors } from 'oidc-provider';
import { isStoreUnavailable } from '../../core/platform/db/store-unavailable.js';
import { STORE_RETRY_AFTER_SECONDS } from '../errors/error-pipeline.js';

/** What a client reads when the authorization server cannot reach its store. */
export const STORE_OUTAGE_DESCRIPTION = 'the database is not reachable; retry later';

/**
 * The authorization server's answer to a store it cannot reach: `temporarily_unavailable`, the
 * code OAuth has for "try again later" (RFC 6749 4.1.2.1; at the token endpoint as in 5.2's
 * extensible codes), 503. The provider shows any other error it did not expect as a 500
 * `server_error`, which reads as a fault of the service or the request, not a wait.
 */
export function storeOutageError(cause: unknown): errors.OIDCProviderError {
  const err = new errors.OIDCProviderError(503, 'temporarily_unavailable', { cause });
  // The provider hides the code of any 5xx behind `server_error` unless it is marked as safe to show.
  err.expose = true;
  err.error_description = STORE_OUTAGE_DESCRIPTION;
  return err;
}

/** Passes an error on, as the outage answer when it says the store cannot be reached. */
export function asOutageWhenStoreDown(err: unknown): unknown {
  return isStoreUnavailable(err) ? storeOutageError(err) : err;
}

/** Calls `work`, turning a store outage into the provider's outage answer. */
export async function answeringStoreOutages<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw asOutageWhenStoreDown(err);
  }
}

/**
 * The provider's 503 answers say when to come back, as the enterprise API's do. Our own steps
 * around its endpoints (the introspection and revocation of enterprise tokens, which read and
 * write revocations after the provider has answered) run outside its error handling: a store
 * outage they meet is answered here as the provider answers one, not as Koa's plain-text 500.
 */
export function answerStoreOutages(provider: Provider): void {
  provider.use(async (oidcCtx, next) => {
    try {
      await next();
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      oidcCtx.status = 503;
      oidcCtx.body = { error: 'temporarily_unavailable', error_description: STORE_OUTAGE_DESCRIPTION };
    }
    if (oidcCtx.status === 503 && !oidcCtx.response.get('Retry-After')) oidcCtx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
  });
}

/**
 * The provider's storage with every store outage answered as `temporarily_unavailable`: every
 * record the provider reads or writes (clients, grants, sessions, codes, tokens) goes through it.
 */
export function adapterAnsweringStoreOutages(Base: new (name: string) => Adapter): new (name: string) => Adapter {
  return class AdapterAnsweringStoreOutages implements Adapter {
    private readonly inner: Adapter;
    constructor(name: string) {
      this.inner = new Base(name);
    }
    upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      return answeringStoreOutages(() => this.inner.upsert(id, payload, expiresIn));
    }
    find(id: string) {
      return answeringStoreOutages(() => this.inner.find(id));
    }
    findByUserCode(userCode: string) {
      return answeringStoreOutages(() => this.inner.findByUserCode(userCode));
    }
    findByUid(uid: string) {
      return answeringStoreOutages(() => this.inner.findByUid(uid));
    }
    consume(id: string) {
      return answeringStoreOutages(() => this.inner.consume(id));
    }
    destroy(id: string) {
      return answeringStoreOutages(() => this.inner.destroy(id));
    }
    revokeByGrantId(grantId: string) {
      return answeringStoreOutages(() => this.inner.revokeByGrantId(grantId));
    }
  };
}
