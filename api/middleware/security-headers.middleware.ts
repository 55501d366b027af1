import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import type { ServiceContext } from '../service-context.js';
import type { EdgeStep } from './edge-step.js';

type Directives = Record<string, string[]>;

// Every answer may not be framed by anyone, and nothing loads from another origin.
const BASE: Directives = {
  'default-src': ["'self'"],
  'base-uri': ["'none'"],
  'object-src': ["'none'"],
  'frame-ancestors': ["'none'"],
};

// JSON and error answers are never documents: nothing in them may run or load.
const API_POLICY: Directives = { ...BASE, 'default-src': ["'none'"], 'form-action': ["'none'"] };

// Swagger UI: its bundle and our init script from this origin, inline styles and data: icons of
// its own, and "Try it out" calls to this API.
const DOCS_POLICY: Directives = {
  ...BASE,
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'form-action': ["'none'"],
};

// The queue dashboard (React): a <base> of its own path, inline styles, data: icons, its API on
// this origin. The web font it asks Google for is refused on purpose: an operator's visits are not
// announced to a third party (the page falls back to a local font).
const DASHBOARD_POLICY: Directives = {
  ...BASE,
  'base-uri': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
};

// Authorization server pages (errors, login interactions). No form-action: a login form posts
// here and is then redirected to the client's registered redirect_uri, which form-action would
// block.
const AUTH_PAGES_POLICY: Directives = {
  ...BASE,
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
};

function headersWith(directives: Directives, hsts: boolean): RequestHandler {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // HSTS only means something on a deployment reached over HTTPS.
    strictTransportSecurity: hsts ? { maxAge: 31536000, includeSubDomains: true } : false,
  });
}

/**
 * Helmet's answer for a policy, taken once: its headers depend on the policy alone (no nonces, no
 * per-request directives), so each request gets the recorded headers in one call instead of
 * running helmet's fourteen middlewares (about 5 % of a token request's CPU).
 */
function answeredOnce(helmetFor: RequestHandler): EdgeStep {
  const headers = new Map<string, string>();
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.set(name, String(value)),
    removeHeader: (name: string) => removed.push(name),
  };
  let done = false;
  void helmetFor({} as Request, recorder as unknown as Response, () => (done = true));
  if (!done) throw new Error('security headers: helmet did not answer synchronously');
  return (_req, res, next) => {
    res.setHeaders(headers);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}

/**
 * Helmet's headers on every answer (nosniff, X-Frame-Options DENY, Referrer-Policy no-referrer,
 * cross-origin isolation headers, no X-Powered-By), with a Content-Security-Policy fitted to what
 * each area serves. Answers are per caller and often carry personal data or secrets (a client
 * secret, tokens): `Cache-Control: no-store` unless a route says otherwise (static assets).
 */
export function securityHeaders(ctx: ServiceContext, paths: { docs: string; dashboard: string; authServer: string }): EdgeStep {
  const hsts = ctx.config.publicUrl.startsWith('https://');
  const api = answeredOnce(headersWith(API_POLICY, hsts));
  const docs = answeredOnce(headersWith(DOCS_POLICY, hsts));
  const dashboard = answeredOnce(headersWith(DASHBOARD_POLICY, hsts));
  const authPages = answeredOnce(headersWith(AUTH_PAGES_POLICY, hsts));
  const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  return (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    // Node's own URL, not Express's `req.path`: the token lane runs this step without Express.
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (under(path, paths.docs)) return docs(req, res, next);
    if (under(path, paths.dashboard)) return dashboard(req, res, next);
    if (under(path, paths.authServer)) return authPages(req, res, next);
    return api(req, res, next);
  };
}
