import type { RouteDoc } from './route-docs.types.js';

// Health, readiness, metrics and the documentation itself.
export const operationsRouteDocs: RouteDoc[] = [
  { method: 'get', path: '/healthz', summary: 'Liveness: the process answers', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'Alive' } } },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: MongoDB and Redis answer',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Ready', schema: 'common.readiness.json' }, '503': { description: 'A dependency is down', schema: 'common.readiness.json' } },
  },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'Metrics in Prometheus text format', contentType: 'text/plain' } } },
  { method: 'get', path: '/openapi.json', summary: 'This document', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'OpenAPI 3.1 document' } } },
  { method: 'get', path: '/docs', summary: 'Interactive API documentation', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'HTML page', contentType: 'text/html' } } },
];
