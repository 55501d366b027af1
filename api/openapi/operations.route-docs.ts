import type { RouteDoc } from './route-docs.types.js';

// Health, readiness, metrics and the documentation itself.
export const operationsRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/',
    summary: 'What this service is and where to go next: an HTML page for browsers, JSON (name, version, links) otherwise',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Name, version and links', schema: 'common.home.json' } },
  },
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process answers',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Alive', schema: 'common.liveness.json' } },
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: MongoDB and Redis answer',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: {
      '200': { description: 'Ready', schema: 'common.readiness.json' },
      '503': { description: 'A dependency is down', schema: 'common.readiness.json' },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Metrics in Prometheus text format', contentType: 'text/plain' } },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: { '200': { description: 'OpenAPI 3.1 document' } },
  },
  {
    method: 'get',
    path: '/docs',
    summary: 'Interactive API documentation',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: { '200': { description: 'HTML page', contentType: 'text/html' } },
  },
  {
    method: 'get',
    path: '/admin/queues',
    summary:
      'Queue dashboard (bull-board) for operators: jobs of every queue by state. Admin token as Bearer, or as the HTTP Basic password in a browser',
    tag: 'operations',
    auth: { kind: 'admin' },
    responses: {
      '200': { description: 'HTML page', contentType: 'text/html' },
      '401': { description: 'Missing or wrong admin token (WWW-Authenticate: Basic)', schema: 'common.error.json' },
    },
  },
];
