import type { Request } from 'express';
import type { Metrics } from '../../core/platform/metrics/metrics.js';
import type { RouteDoc } from '../openapi/route-docs.types.js';
import { createTemplateMatcher } from '../openapi/route-templates.js';
import type { EdgeRequest, EdgeStep } from './edge-step.js';

/**
 * Observes every response by route template, never the raw URL, to bound label cardinality.
 * Express routes name their own template; requests the authorization server (a mounted Koa app)
 * answers get the documented template of their path, and anything else `unmatched`. A request
 * whose caller went away before its answer was written counts with status `aborted`: those are
 * often the slowest (a proxy's or client's timeout), and leaving them out would hide them.
 */
export function httpMetrics(metrics: Metrics, docs: readonly RouteDoc[]): EdgeStep {
  const templateOf = createTemplateMatcher(docs);
  // Express's route and mount path when Express served the request; the token lane has neither.
  return (req: EdgeRequest & Partial<Pick<Request, 'route' | 'baseUrl'>>, res, next) => {
    const stop = metrics.httpRequestDuration.startTimer();
    // 'close' comes once per request: after 'finish' when the answer was written in full, alone when the caller left.
    res.once('close', () => {
      const routePath = (req.route as { path?: string } | undefined)?.path;
      const route = routePath
        ? `${req.baseUrl ?? ''}${routePath}`
        : (templateOf((req.originalUrl ?? req.url ?? '').split('?')[0] ?? '') ?? 'unmatched');
      stop({ method: req.method, route, status: res.writableFinished ? String(res.statusCode) : 'aborted' });
    });
    next();
  };
}
