import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import { buildOpenApiDocument } from '../openapi/openapi-document.js';
import type { ServiceContext } from '../service-context.js';

export const DOCS_PATH = '/docs';

// The package's directory, found without importing it: its main module loads the 1.5 MB browser
// bundle into the server's heap (about 23 MB of RSS) only to hand out this path.
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// Served from the npm package's own assets: no CDN, works offline.
const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc-identity API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui' });`;

export function docsRoutes(ctx: ServiceContext): Router {
  const router = Router();
  const document = buildOpenApiDocument(ctx.config.publicUrl);
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(DOCS_INIT);
  });
  // The package's assets are the same for everyone: cacheable, unlike every other answer.
  const cacheable: RequestHandler = (_req, res, next) => {
    res.removeHeader('Cache-Control');
    next();
  };
  router.use('/docs/assets', cacheable, express.static(SWAGGER_UI_DIR, { index: false, maxAge: '1h' }));
  return router;
}
