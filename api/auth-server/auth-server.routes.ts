import type { ServerResponse } from 'node:http';
import { Router, type RequestHandler } from 'express';
import type Provider from 'oidc-provider';
import type { CallerAddress } from '../caller-address.js';
import type { ServiceContext } from '../service-context.js';
import { loadCookieKeys } from '../../core/auth/signing-key.service.js';
import { AUTH_SERVER_PATH, AUTH_SERVER_ROUTES, createAuthServer, type AuthServerStores } from './auth-server.js';
import { browserWindowOnly } from './browser-window-only.js';
import type { EdgeRequest } from '../middleware/edge-step.js';
import type { UserTokenStores } from '../middleware/user-token-auth.middleware.js';
import { interactionRoutes, type InteractionServices } from './interaction.routes.js';
import { userinfoRoutes } from './userinfo.routes.js';

/** Where RFC 8414 clients look for the metadata of an issuer with a path (section 3), and the common variant. */
export const AUTHORIZATION_SERVER_METADATA_PATHS = [
  `/.well-known/oauth-authorization-server${AUTH_SERVER_PATH}`,
  `${AUTH_SERVER_PATH}/.well-known/oauth-authorization-server`,
];

/** The token endpoint's full path (the provider's `/oauth/token` under its mount path). */
export const TOKEN_ENDPOINT_PATH = `${AUTH_SERVER_PATH}/oauth/token`;

export interface AuthServerRoutes {
  router: Router;
  /** Serves a request for the token endpoint without Express (api/token-lane.ts); rejects when the provider cannot. */
  serveTokenRequest: (req: EdgeRequest, res: ServerResponse) => Promise<void>;
}

/**
 * The authorization server mounted at /svc/authserver, plus its RFC 8414 metadata paths (the
 * same document as OpenID discovery, which is a superset of RFC 8414 metadata). The provider
 * needs the signing keys from MongoDB, so it is built in the background when the app is built
 * and requests wait for it; buildApp stays synchronous. It is built again when the keys change.
 */
export function authServerRoutes(
  ctx: ServiceContext,
  interactions: Omit<InteractionServices, 'logger'>,
  stores: AuthServerStores,
  userTokens: UserTokenStores,
  callerAddress: CallerAddress,
): AuthServerRoutes {
  type Built = { provider: Provider; callback: ReturnType<Provider['callback']> };
  let built: { version: string; ready: Promise<Built> } | undefined;
  // Read once (they never change): building the provider again when the signing keys change then
  // needs nothing from the store, so a key that starts signing during a MongoDB outage does not
  // take the authorization server down with it, nor make each request try a read.
  let cookieKeys: Promise<string[]> | undefined;
  const cookieKeysOnce = (): Promise<string[]> => {
    if (!cookieKeys) {
      const reading = loadCookieKeys(ctx.mongo);
      cookieKeys = reading;
      reading.catch(() => {
        if (cookieKeys === reading) cookieKeys = undefined;
      });
    }
    return cookieKeys;
  };
  // The provider takes its keys when it is built: when the process's signing keys change (a
  // rotation read from the store, a rotated key starting to sign, a retired one removed), the next
  // request builds it again with them and every request from then on goes to the new one. Requests
  // under way finish on the old one.
  const handler = async (): Promise<Built> => {
    const keys = await stores.signingKeys();
    if (built?.version === keys.version) return built.ready;
    const ready = cookieKeysOnce()
      .then((cookies) => createAuthServer(ctx, stores, callerAddress, { signingKeys: keys, cookieKeys: cookies }))
      .then((provider) => ({ provider, callback: provider.callback() }));
    const attempt = { version: keys.version, ready };
    built = attempt;
    ready.catch(() => {
      if (built === attempt) built = undefined;
    });
    return ready;
  };
  // Start now so the first token request does not pay for key generation; errors surface per request.
  handler().catch((err: unknown) => {
    // A context closed during start-up (short tests, shutdown) is not worth an error line.
    if (ctx.mongo.readyState === 1) ctx.logger.error({ err }, 'authorization server failed to start');
  });
  const publicUrl = new URL(ctx.config.publicUrl);
  // The caller's Host / X-Forwarded-* must not choose the URLs the provider publishes, nor
  // whether its cookies are Secure (they are whenever PUBLIC_URL is https).
  const setForwardedHeaders = (req: EdgeRequest) => {
    req.headers['x-forwarded-host'] = publicUrl.host;
    req.headers['x-forwarded-proto'] = publicUrl.protocol.replace(/:$/, '');
  };
  // `req.url` is the path under the mount path and `originalUrl` the full one: the provider
  // takes its own mount path from the two.
  const toProvider = async (req: EdgeRequest, res: ServerResponse) => {
    setForwardedHeaders(req);
    const { callback } = await handler();
    await callback(req, res);
  };
  const serve: RequestHandler = (req, res, next) => toProvider(req, res).catch(next);
  const router = Router();
  for (const path of AUTHORIZATION_SERVER_METADATA_PATHS) {
    router.get(path, (req, res, next) => {
      // Served as if asked at the mounted discovery path, so endpoint URLs keep their prefix.
      req.originalUrl = `${AUTH_SERVER_PATH}/.well-known/openid-configuration`;
      req.url = '/.well-known/openid-configuration';
      return serve(req, res, next);
    });
  }
  // Before anything that reads, stores or counts for a sign-in page (browser-window-only.ts).
  router.use(
    AUTH_SERVER_PATH,
    browserWindowOnly({
      authorization: AUTH_SERVER_ROUTES.authorization,
      interaction: '/interaction',
      endSession: AUTH_SERVER_ROUTES.end_session,
    }),
  );
  router.use(interactionRoutes(async () => (await handler()).provider, { ...interactions, logger: ctx.logger }, setForwardedHeaders));
  router.use(userinfoRoutes(userTokens));
  router.use(AUTH_SERVER_PATH, serve);
  const serveTokenRequest = (req: EdgeRequest, res: ServerResponse) => {
    req.originalUrl = TOKEN_ENDPOINT_PATH;
    req.url = TOKEN_ENDPOINT_PATH.slice(AUTH_SERVER_PATH.length);
    return toProvider(req, res);
  };
  return { router, serveTokenRequest };
}
