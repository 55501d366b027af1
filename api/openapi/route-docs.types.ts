// One documented operation: the OpenAPI document is assembled from these and schemas/.
export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** OpenAPI path template, e.g. /v1/users/{userId} */
  path: string;
  summary: string;
  tag: string;
  /** bearer: enterprise access token with the scope; user: a user's access token; admin: ADMIN_TOKEN; none: public */
  auth: { kind: 'bearer'; scope: string } | { kind: 'user'; scope: string } | { kind: 'admin' } | { kind: 'none' };
  /** Query parameters (all optional unless `required`). */
  query?: { name: string; description: string; schema: Record<string, unknown>; required?: boolean }[];
  /** Request headers the operation reads (all optional unless `required`). */
  headers?: { name: string; description: string; schema: Record<string, unknown>; required?: boolean }[];
  requestSchema?: string;
  requestContentType?: string;
  /** `array`: the body is a JSON array of `schema` items. `headers`: response headers worth naming (e.g. a paged list's `Link`). */
  responses: Record<
    string,
    {
      description: string;
      schema?: string;
      /**
       * The body's media type, or each of them when the answer depends on the request (a sign-in
       * page's 400: an HTML page to a browser window, plain text to a request that is not a page of
       * its own). Omitted: application/json. `schema` describes the JSON one (or the only one);
       * every other listed type is a string body.
       */
      contentType?: string | readonly string[];
      array?: boolean;
      links?: Record<string, RouteLink>;
      headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
    }
  >;
}

/** An OpenAPI link: where a value of this answer (or request) is used next, e.g. a new resource's id. */
export interface RouteLink {
  method: RouteDoc['method'];
  path: string;
  /** Parameter name → runtime expression (`$response.body#/otpUuid`, `$request.body#/userId`). */
  parameters: Record<string, string>;
  description?: string;
}
