import type { RequestHandler } from 'express';
import { HttpError } from '../errors/http-error.js';
import type { ServiceContext } from '../service-context.js';
import { METRICS_CHALLENGE, metricsTokenCheck } from '../../core/platform/secret-match.js';

/**
 * With METRICS_TOKEN set, the API's `/metrics` answers only `Authorization: Bearer <METRICS_TOKEN>`
 * (Prometheus' `authorization.credentials`): the API port is public, and the metrics tell business
 * volumes and cost Redis reads per scrape. Unset, it answers anyone.
 */
export function requireMetricsToken(ctx: ServiceContext): RequestHandler {
  const presentsToken = metricsTokenCheck(ctx.config.metricsToken);
  return (req, _res, next) => {
    if (!presentsToken(req.get('authorization'))) {
      throw new HttpError('METRICS_UNAUTHORIZED', 401, 'Invalid or missing metrics token', {
        headers: { 'WWW-Authenticate': METRICS_CHALLENGE },
      });
    }
    next();
  };
}
