import { Router } from 'express';
import { serviceRelease } from '../../core/platform/service-release.js';
import type { ServiceContext } from '../service-context.js';
import { QUEUES_DASHBOARD_PATH } from './admin-queues.routes.js';
import { DOCS_PATH } from './docs.routes.js';

const { name, version } = serviceRelease;

/** Where a newcomer goes next: the same links for browsers (a page) and API clients (JSON). */
const LINKS = [
  { rel: 'docs', href: DOCS_PATH, title: 'API documentation (try the API in the browser)' },
  { rel: 'openapi', href: '/openapi.json', title: 'OpenAPI 3.1 document' },
  { rel: 'discovery', href: '/svc/authserver/.well-known/openid-configuration', title: 'Authorization server discovery' },
  { rel: 'health', href: '/healthz', title: 'Liveness' },
  { rel: 'readiness', href: '/readyz', title: 'Readiness (MongoDB and Redis)' },
  { rel: 'metrics', href: '/metrics', title: 'Prometheus metrics' },
  { rel: 'queues', href: QUEUES_DASHBOARD_PATH, title: 'Queue dashboard (admin token)' },
] as const;

// No styles or scripts: the page is served under the API's content policy, which allows neither.
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name} ${version}</title></head>
<body><main><h1>${name} <small>${version}</small></h1>
<p>Identity and messaging service: one-time passwords by SMS and e-mail, user enrollment, approval notifications, and an OAuth 2.0 authorization server.</p>
<ul>
${LINKS.map((link) => `<li><a href="${link.href}">${link.title}</a></li>`).join('\n')}
</ul></main></body></html>`;

/** `GET /`: a small page for people who open the service in a browser, JSON for everything else. */
export function homeRoutes(_ctx: ServiceContext): Router {
  const router = Router();
  router.get('/', (req, res) => {
    res.vary('Accept');
    if (req.accepts(['json', 'html']) === 'html') {
      res.type('html').send(PAGE);
      return;
    }
    res.json({ name, version, links: Object.fromEntries(LINKS.map((link) => [link.rel, link.href])) });
  });
  return router;
}
