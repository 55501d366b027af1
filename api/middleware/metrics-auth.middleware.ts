import type { RequestHandler } from 'express';
import { HttpError } from '../errors/http-error.js';
import type { ServiceContext } from '../service-context.js';
import { presentedMatches, secretDigest } from './shared-secret.js';

/**
 * With METRICS_TOKEN set, the API's `/metrics` answers only `Authorization: Bearer <METRICS_TOKEN>`
 * (Prometheus' `authorization.credentials`): the API port is public, and the metrics tell business
 * volumes and cost Redis reads per scrape. Unset, it answers anyone, as before.
 */
export function requireMetricsToken(ctx: ServiceContext): RequestHandler {
  const expected = ctx.config.metricsToken === undefined ? undefined : secretDigest(ctx.config.metricsToken);
  return (req, _res, next) => {
    if (expected && !presentedMatches(/^Bearer (.+)$/i.exec(req.get('authorization')?.trim() ?? '')?.[1], expected)) {
      throw new HttpError('METRICS_UNAUTHORIZED', 401, 'Invalid or missing metrics token', {
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      });
    }
    next();
  };
}
