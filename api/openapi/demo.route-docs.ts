import type { RouteDoc } from './route-docs.types.js';

const notFound = { description: 'No such file, or the app is not served (DEMO_APPROVER off)', schema: 'common.error.json' };

// The approver example app: served only when DEMO_APPROVER is on (default in development only).
export const demoRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/demo/approver',
    summary: 'The approver example app (HTML; DEMO_APPROVER=on only): activate this browser as a device, sign in, answer approvals',
    tag: 'demo',
    auth: { kind: 'none' },
    responses: {
      '200': { description: 'The page (at /demo/approver/)', contentType: 'text/html' },
      '301': { description: 'To /demo/approver/ (the page links its files relatively)' },
      '404': notFound,
    },
  },
  {
    method: 'get',
    path: '/demo/approver/{file}',
    summary: "The app's files: app.js, style.css, and config.json (service URL, the app's client id and redirect URI)",
    tag: 'demo',
    auth: { kind: 'none' },
    responses: { '200': { description: 'The file' }, '404': notFound },
  },
  {
    method: 'get',
    path: '/demo/approver/lib/{library}/{file}',
    summary: 'The client library build (`client`) and its dependency (`oauth4webapi`), as ES modules for the import map of the page',
    tag: 'demo',
    auth: { kind: 'none' },
    responses: { '200': { description: 'The module', contentType: 'application/javascript' }, '404': notFound },
  },
];
