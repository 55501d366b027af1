import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import { DEMO_CLIENT_ID } from '../../core/clients/demo-client.js';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { projectRoot } from '../../core/platform/project-root.js';
import type { ServiceContext } from '../service-context.js';

export const DEMO_APPROVER_PATH = '/demo/approver';

const LIB_PATH = `${DEMO_APPROVER_PATH}/lib`;
const JS_FILE_RE = /^[a-z0-9-]+\.js$/;

interface Asset {
  type: string;
  body: Buffer | string;
}

/** The built `.js` files of a folder (no maps, no declarations), or none when it is not built. */
function scriptsIn(dir: string): Map<string, Asset> {
  if (!existsSync(dir)) return new Map();
  const names = readdirSync(dir).filter((name) => JS_FILE_RE.test(name));
  return new Map(names.map((name) => [name, { type: 'application/javascript', body: readFileSync(join(dir, name)) }]));
}

/**
 * The approver page: its static files, the client library's build and its one dependency, all read
 * once at start and served from memory (only these names, so no path reaches the file system). The
 * browser resolves the library's bare imports through an import map; the page's policy allows that
 * one inline script by its hash and nothing from other origins.
 */
function loadAssets(ctx: ServiceContext) {
  const appDir = join(projectRoot, 'examples', 'approver');
  const importMap = JSON.stringify({
    imports: { '@svc-identity/client': `${LIB_PATH}/client/index.js`, oauth4webapi: `${LIB_PATH}/oauth4webapi/index.js` },
  });
  const page = readFileSync(join(appDir, 'index.html'), 'utf8').replace(
    '<!--IMPORT_MAP-->',
    `<script type="importmap">${importMap}</script>`,
  );
  const importMapHash = createHash('sha256').update(importMap).digest('base64');
  const policy = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${importMapHash}'`,
    "style-src 'self'",
    "connect-src 'self'",
    // The service worker that shows Web Push alerts (sw.js).
    "worker-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  const config = {
    serviceUrl: ctx.config.publicUrl,
    clientId: DEMO_CLIENT_ID,
    redirectUri: `${ctx.config.publicUrl}${DEMO_APPROVER_PATH}/`,
  };
  const appFiles = new Map<string, Asset>([
    ['app.js', { type: 'application/javascript', body: readFileSync(join(appDir, 'app.js')) }],
    ['style.css', { type: 'text/css', body: readFileSync(join(appDir, 'style.css')) }],
    ['sw.js', { type: 'application/javascript', body: readFileSync(join(appDir, 'sw.js')) }],
    ['config.json', { type: 'application/json', body: JSON.stringify(config) }],
  ]);
  const libraries = new Map([
    ['client', scriptsIn(join(projectRoot, 'sdk', 'dist'))],
    ['oauth4webapi', scriptsIn(join(projectRoot, 'node_modules', 'oauth4webapi', 'build'))],
  ]);
  return { page, policy, appFiles, libraries };
}

/** The approver example app at /demo/approver/ (only when DEMO_APPROVER is on). */
export function demoApproverRoutes(ctx: ServiceContext): Router {
  const router = Router();
  if (!ctx.config.demoApprover) return router;
  const { page, policy, appFiles, libraries } = loadAssets(ctx);
  if ((libraries.get('client')?.size ?? 0) === 0)
    ctx.logger.warn('the client library is not built (npm run build): the approver app cannot load it');

  router.get(DEMO_APPROVER_PATH, (req, res) => {
    // Relative links of the page need the trailing slash.
    if (!req.originalUrl.split('?')[0]?.endsWith('/')) return res.redirect(301, `${DEMO_APPROVER_PATH}/`);
    res.setHeader('Content-Security-Policy', policy);
    res.type('html').send(page);
  });
  router.get(`${DEMO_APPROVER_PATH}/:file`, (req, res) => {
    const asset = appFiles.get(String(req.params.file));
    if (!asset) throw new NotFoundError('Not found');
    res.type(asset.type).send(asset.body);
  });
  router.get(`${LIB_PATH}/:library/:file`, (req, res) => {
    const asset = libraries.get(String(req.params.library))?.get(String(req.params.file));
    if (!asset) throw new NotFoundError('Not found');
    res.type(asset.type).send(asset.body);
  });
  return router;
}
