import { AsyncLocalStorage } from 'node:async_hooks';
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { ClientAuthenticationLimits } from '../../core/clients/client-authentication-limits.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { clientAuthenticationFailures } from '../../core/platform/metrics/business-metrics.js';
import { retryAfterSeconds } from '../../core/platform/throttling/redis-limiter.js';
import type { CallerAddress } from '../caller-address.js';

/** A request's context as the provider's own middleware gets it (before routing it has no `oidc`). */
type ProviderContext = Parameters<Parameters<Provider['use']>[0]>[0];

/** The endpoints that authenticate clients, as the metrics name them. */
export type ClientAuthenticatingEndpoint = 'token' | 'introspection' | 'revocation';

export interface ClientAuthenticationLimitOptions {
  limits: ClientAuthenticationLimits;
  callerAddress: CallerAddress;
  /** The endpoints' paths under the provider's mount path (its `routes`), with their names. */
  endpoints: ReadonlyMap<string, ClientAuthenticatingEndpoint>;
  logger: Logger;
}

/**
 * The OAuth error code of the 429. RFC 6749 defines none for a limit at the token endpoint;
 * `temporarily_unavailable` (RFC 6749 4.1.2.1) is its code for "try again later", and it says
 * nothing about the credentials: `invalid_client` would tell a client that sent its right secret
 * that the secret is wrong (docs/authorization-server.md weighs the others).
 */
export const LIMITED_ERROR = 'temporarily_unavailable';

/** One request to an endpoint that authenticates clients, while this process knows of spent budgets. */
interface Attempt {
  address: string;
  /** Set once the client named by the request has been checked (later look-ups are not this request's client). */
  clientChecked: boolean;
  /** Set when this client may not be tried from this address now. */
  waitMs: number;
}

/**
 * Limits failed client authentication at the token, introspection and revocation endpoints
 * (core/clients/client-authentication-limits.ts has the budgets and why). Every 401
 * `invalid_client` these endpoints give (wrong secret, unknown client id, no authentication where
 * one is needed) is counted. An address that has used up its failures, for one client or for
 * all, is refused 429 with Retry-After before the client is looked up or any secret compared.
 * A request that succeeds costs nothing here while this process knows of no spent budget (the
 * usual case), and at most a look in this process's memory otherwise: never a Redis call.
 */
export function limitFailedClientAuthentication(provider: Provider, options: ClientAuthenticationLimitOptions): void {
  const { limits, callerAddress, logger } = options;
  const endpointAt = endpointsAsRouted(options.endpoints);
  const attempts = new AsyncLocalStorage<Attempt>();

  provider.use(async (oidcCtx, next) => {
    const endpoint = oidcCtx.method === 'POST' ? endpointAt(oidcCtx.path) : undefined;
    if (endpoint === undefined) return next();
    let address: string | undefined;
    if (limits.isQuiet()) {
      await next();
    } else {
      address = callerAddress(oidcCtx.req);
      const addressWaitMs = limits.addressWaitMs(address);
      if (addressWaitMs > 0) return refuse(oidcCtx, endpoint, addressWaitMs, { beforeRouting: true });
      const attempt: Attempt = { address, clientChecked: false, waitMs: 0 };
      await attempts.run(attempt, next);
      if (attempt.waitMs > 0) return refuse(oidcCtx, endpoint, attempt.waitMs);
    }
    if (!isFailedClientAuthentication(oidcCtx)) return;
    await countFailure(oidcCtx, endpoint, address ?? callerAddress(oidcCtx.req));
  });

  /** Counts the failure; the one that spends a budget is logged, and one past a budget (counted elsewhere first) is refused. */
  async function countFailure(oidcCtx: ProviderContext, endpoint: ClientAuthenticatingEndpoint, address: string): Promise<void> {
    // Only a client that exists is named: an unknown client_id may be anything (a secret pasted
    // into the wrong field), so it is neither logged nor given a count of its own.
    const clientId = (oidcCtx as Partial<KoaContextWithOIDC>).oidc?.client?.clientId;
    const failure = await limits.countFailure(address, clientId).catch((err: unknown) => {
      // The budgets fall back to this process's memory when Redis fails; anything else must
      // not turn a 401 into a 500.
      logger.error({ err, endpoint }, 'failed client authentication could not be counted');
      return undefined;
    });
    for (const budget of failure?.spent ?? []) {
      logger.warn(
        {
          endpoint,
          address,
          ...(clientId === undefined ? {} : { clientId }),
          budget,
          retryAfterSeconds: retryAfterSeconds(failure?.waitMs ?? 0),
        },
        budget === 'address'
          ? 'too many failed client authentications from this address: refused for every client until the window ends'
          : 'too many failed authentications of this client from this address: refused for this client until the window ends',
      );
    }
    if (failure?.refused) return refuse(oidcCtx, endpoint, failure.waitMs);
    clientAuthenticationFailures.inc({ endpoint, outcome: 'failed' });
  }

  // The first look-up of a client in such a request is the client it authenticates: checked
  // before the look-up (a store read for an unknown id) and before its secret is compared.
  const ClientClass = provider.Client as unknown as { find: (id: unknown) => Promise<unknown> };
  const find = ClientClass.find.bind(ClientClass);
  ClientClass.find = (id) => {
    const attempt = attempts.getStore();
    if (attempt && !attempt.clientChecked && typeof id === 'string') {
      attempt.clientChecked = true;
      attempt.waitMs = limits.clientWaitMs(id, attempt.address);
      if (attempt.waitMs > 0) return Promise.reject(new errors.OIDCProviderError(429, LIMITED_ERROR));
    }
    return find(id);
  };
}

/**
 * The endpoint a path reaches, as the provider's router matches it: ASCII letters in any case and
 * one trailing slash (`/oauth/TOKEN`, `/oauth/token/`). Compared as written, those spellings
 * would reach the endpoint without being limited.
 */
function endpointsAsRouted(
  endpoints: ReadonlyMap<string, ClientAuthenticatingEndpoint>,
): (path: string) => ClientAuthenticatingEndpoint | undefined {
  const fold = (path: string) => path.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
  const folded = new Map([...endpoints].map(([path, endpoint]) => [fold(path), endpoint]));
  return (path) => {
    const exact = folded.get(fold(path));
    if (exact !== undefined || path.length <= 1 || !path.endsWith('/')) return exact;
    return folded.get(fold(path.slice(0, -1)));
  };
}

function isFailedClientAuthentication(oidcCtx: ProviderContext): boolean {
  return oidcCtx.status === 401 && (oidcCtx.body as { error?: unknown } | undefined)?.error === 'invalid_client';
}

/**
 * The 429 (RFC 6585) in the shape of RFC 6749 5.2, with Retry-After in seconds, readable by a
 * page wherever the endpoint's other answers are. A refusal before routing never reaches the
 * provider's CORS step, so it gets what that step gives every answer before a client is known
 * (the caller's origin, as for a 401 `invalid_client`); without it a single-page app saw a
 * network error instead of the 429. Retry-After is exposed: a page cannot read it otherwise.
 */
function refuse(oidcCtx: ProviderContext, endpoint: ClientAuthenticatingEndpoint, waitMs: number, { beforeRouting = false } = {}): void {
  const seconds = retryAfterSeconds(waitMs);
  oidcCtx.status = 429;
  oidcCtx.remove('WWW-Authenticate');
  oidcCtx.set('Retry-After', String(seconds));
  const origin = oidcCtx.get('Origin');
  if (beforeRouting && origin) {
    oidcCtx.vary('Origin');
    oidcCtx.set('Access-Control-Allow-Origin', origin);
  }
  if (oidcCtx.response.get('Access-Control-Allow-Origin')) oidcCtx.set('Access-Control-Expose-Headers', 'Retry-After');
  oidcCtx.body = {
    error: LIMITED_ERROR,
    error_description: `too many failed client authentications from this address; try again in ${seconds} seconds`,
  };
  clientAuthenticationFailures.inc({ endpoint, outcome: 'limited' });
}
