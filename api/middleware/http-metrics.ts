import type { RequestHandler } from 'express';
import type { Metrics } from '../../core/metrics/metrics.js';

/** Observes every response by route template (never the raw URL, to bound label cardinality). */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpRequestDuration.startTimer();
    res.once('finish', () => {
      const routePath = (req.route as { path?: string } | undefined)?.path;
      const route = routePath ? `${req.baseUrl}${routePath}` : req.baseUrl || 'unmatched';
      stop({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
