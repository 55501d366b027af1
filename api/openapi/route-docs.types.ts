// One documented operation: the OpenAPI document is assembled from these and schemas/.
export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** OpenAPI path template, e.g. /v1/users/{userId} */
  path: string;
  summary: string;
  tag: string;
  /** bearer: OAuth 2.0 access token with the scope; user: a user's access token (authorization code flow); admin: ADMIN_TOKEN; none: public */
  auth: { kind: 'bearer'; scope: string } | { kind: 'user'; scope: string } | { kind: 'admin' } | { kind: 'none' };
  requestSchema?: string;
  requestContentType?: string;
  responses: Record<string, { description: string; schema?: string; contentType?: string }>;
}
