import { Router, type RequestHandler } from 'express';
import { HttpError } from '../errors/http-error.js';
import type { RouteDoc } from '../openapi/route-docs.types.js';
import { pathPattern } from '../openapi/route-templates.js';
import type { ServiceContext } from '../service-context.js';
import { requireBearer, type BearerStores } from './bearer-auth.middleware.js';
import { requireAllowedIp } from './ip-allow-list.middleware.js';

interface DocumentedPath {
  template: string;
  pattern: RegExp;
  params: number;
  methods: Set<string>;
  allow: string;
  /** The scope of the path's enterprise operations: their callers authenticate before a 405. */
  scope?: string;
}

function documentedPaths(docs: readonly RouteDoc[]): DocumentedPath[] {
  const byPath = new Map<string, RouteDoc[]>();
  for (const doc of docs) byPath.set(doc.path, [...(byPath.get(doc.path) ?? []), doc]);
  return [...byPath.entries()].map(([template, ops]) => {
    // Express answers HEAD with its GET route.
    const methods = new Set(ops.flatMap((op) => (op.method === 'get' ? ['GET', 'HEAD'] : [op.method.toUpperCase()])));
    const bearer = ops.find((op) => op.auth.kind === 'bearer')?.auth;
    return {
      template,
      pattern: pathPattern(template),
      params: (template.match(/\{/g) ?? []).length,
      methods,
      allow: [...methods].join(', '),
      ...(bearer?.kind === 'bearer' ? { scope: bearer.scope } : {}),
    };
  });
}

/**
 * A method the document does not list for a path it does list is 405 with `Allow` (RFC 9110
 * 15.5.6), not 404; OPTIONS is answered 204 with `Allow`. A literal path wins over a template, as
 * OpenAPI resolves them: `/v1/users/activate` is not the user called "activate". Enterprise paths
 * authenticate first (authentication and the allow-list are checked before the method).
 */
export function methodNotAllowed(ctx: ServiceContext, bearer: BearerStores, docs: readonly RouteDoc[]): RequestHandler {
  const paths = documentedPaths(docs).sort((a, b) => a.params - b.params);
  const guards = new Map<string, RequestHandler[]>();
  const guardOf = (scope: string) => {
    const guard = guards.get(scope) ?? [requireBearer(ctx, bearer, scope), requireAllowedIp(bearer.clients)];
    guards.set(scope, guard);
    return guard;
  };
  const refusals = new Map(
    paths.map((path) => {
      const refuse: RequestHandler = (req) => {
        throw new HttpError('METHOD_NOT_ALLOWED', 405, `Request method '${req.method}' is not supported`, {
          headers: { Allow: path.allow },
        });
      };
      return [path, path.scope ? Router().use(...guardOf(path.scope), refuse) : refuse] as const;
    }),
  );
  return (req, res, next) => {
    const path = paths.find((p) => p.pattern.test(req.path));
    if (!path || path.methods.has(req.method)) return next();
    res.set('Allow', path.allow);
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    return (refusals.get(path) as RequestHandler)(req, res, next);
  };
}
