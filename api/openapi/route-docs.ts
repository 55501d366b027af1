// The catalog of documented operations. Request bodies point at schemas/ by `$id`; a test
// fails when the app serves a route that is not listed here.

export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** OpenAPI path template, e.g. /v1/users/{userId} */
  path: string;
  summary: string;
  tag: string;
  /** bearer: OAuth 2.0 access token with the scope; admin: ADMIN_TOKEN; none: public */
  auth: { kind: 'bearer'; scope: string } | { kind: 'admin' } | { kind: 'none' };
  requestSchema?: string;
  requestContentType?: string;
  responses: Record<string, { description: string; schema?: string; contentType?: string }>;
}

const errorResponses = {
  '400': { description: 'Malformed request', schema: 'common.error.json' },
  '401': { description: 'Missing or invalid credentials', schema: 'common.bearer-error.json' },
  '422': { description: 'Validation failed', schema: 'common.error.json' },
};

export const routeDocs: RouteDoc[] = [
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

/** Shared error responses, for route entries added by feature modules. */
export const commonErrors = errorResponses;
