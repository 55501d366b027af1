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

const segmentsOf = (template: string) => template.split('/');
const isParam = (segment: string) => segment.startsWith('{');

/**
 * Whether every request path `narrow` stands for is also one of `wide`'s: the same segments, each
 * equal or a parameter in `wide` (`/v1/users/{userId}` covers `/v1/users/activate`).
 */
function covers(wide: string, narrow: string): boolean {
  const w = segmentsOf(wide);
  const n = segmentsOf(narrow);
  return (
    wide !== narrow && w.length === n.length && w.every((segment, i) => isParam(segment) || (!isParam(n[i] as string) && segment === n[i]))
  );
}

function documentedPaths(docs: readonly RouteDoc[]): DocumentedPath[] {
  const byPath = new Map<string, RouteDoc[]>();
  for (const doc of docs) byPath.set(doc.path, [...(byPath.get(doc.path) ?? []), doc]);
  // Express answers HEAD with its GET route.
  const methodsOf = (ops: RouteDoc[]) => ops.flatMap((op) => (op.method === 'get' ? ['GET', 'HEAD'] : [op.method.toUpperCase()]));
  return [...byPath.entries()].map(([template, ops]) => {
    // A literal path's URL is also a URL of the templates that cover it: `/v1/users/activate`
    // is the activation route for POST and the user called "activate" for GET, PATCH and DELETE,
    // so that every userId enrollment accepts can be read, changed and deleted.
    const covering = [...byPath.entries()].filter(([wide]) => covers(wide, template)).flatMap(([, wideOps]) => methodsOf(wideOps));
    const methods = new Set([...methodsOf(ops), ...covering]);
    // Authentication before the 405 follows the path's own operations (the activation route is public).
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
 * 15.5.6), not 404; OPTIONS is answered 204 with `Allow`. A literal path is matched before a
 * template, and also serves the methods of the templates that cover it (see documentedPaths).
 * Enterprise paths authenticate first (authentication and the allow-list are checked before the
 * method).
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
