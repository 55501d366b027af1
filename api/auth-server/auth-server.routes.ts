import type { RequestHandler } from 'express';
import type Provider from 'oidc-provider';
import type { ServiceContext } from '../service-context.js';
import { createAuthServer } from './auth-server.js';

/**
 * The authorization server as Express middleware, to mount at /svc/authserver. The provider
 * needs the signing key from MongoDB, so it is built in the background when the app is built
 * and requests wait for it; buildApp stays synchronous.
 */
export function authServerRoutes(ctx: ServiceContext): RequestHandler {
  let built: Promise<ReturnType<Provider['callback']>> | undefined;
  const handler = () => {
    built ??= createAuthServer(ctx).then((provider) => provider.callback());
    built.catch(() => {
      built = undefined;
    });
    return built;
  };
  // Start now so the first token request does not pay for key generation; errors surface per request.
  handler().catch((err: unknown) => {
    // A context closed during start-up (short tests, shutdown) is not worth an error line.
    if (ctx.mongo.readyState === 1) ctx.logger.error({ err }, 'authorization server failed to start');
  });
  return async (req, res, next) => {
    try {
      const callback = await handler();
      await callback(req, res);
    } catch (err) {
      next(err);
    }
  };
}
