import { loadSchemas, type JsonSchema } from '../../core/platform/schemas/schema-registry.js';
import { serviceRelease } from '../../core/platform/service-release.js';
import { routeDocs, type RouteDoc } from './route-docs.js';
import type { RouteLink } from './route-docs.types.js';

const componentName = (id: string) => id.replace(/\.json$/, '');

/** Rewrites `$ref: "x.json#/..."` between our files into component references. */
function toComponentRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toComponentRefs);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) {
      const [file, pointer] = value.split('#');
      out.$ref = `#/components/schemas/${componentName(file ?? '')}${pointer ?? ''}`;
    } else if (key !== '$id' && key !== '$schema') {
      out[key] = toComponentRefs(value);
    }
  }
  return out;
}

const schemaRef = (id: string) => ({ $ref: `#/components/schemas/${componentName(id)}` });

// Every JSON body is read by the same parser, so every operation taking one can get these.
const JSON_BODY_ERRORS: RouteDoc['responses'] = {
  '400': {
    description: 'Malformed request body: empty, not JSON, not an object, or a gzip/deflate/br encoding that does not decompress',
    schema: 'common.error.json',
  },
  '413': { description: 'Request body is too large', schema: 'common.error.json' },
  '415': { description: "Content type '<type>' not supported: the body must be application/json", schema: 'common.error.json' },
};

function responsesOf(doc: RouteDoc): RouteDoc['responses'] {
  const takesJson = doc.requestSchema !== undefined && (doc.requestContentType ?? 'application/json') === 'application/json';
  return takesJson ? { ...JSON_BODY_ERRORS, ...doc.responses } : doc.responses;
}

// JSON Pointer escaping of a path inside `#/paths/...` (RFC 6901).
const operationRef = (method: string, path: string) => `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}`;

function linksOf(links: Record<string, RouteLink>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(links).map(([name, link]) => [
      name,
      {
        operationRef: operationRef(link.method, link.path),
        parameters: link.parameters,
        ...(link.description ? { description: link.description } : {}),
      },
    ]),
  );
}

const STORE_UNAVAILABLE = 'The database is not reachable (Retry-After header)';

/** Routes that read or write MongoDB answer 503 while it is down; the rest never touch it. */
function withStoreUnavailable(doc: RouteDoc, responses: RouteDoc['responses']): RouteDoc['responses'] {
  const usesStore = doc.auth.kind !== 'none' || doc.path.startsWith('/webhooks/');
  if (!usesStore) return responses;
  const existing = responses['503'];
  const response = existing
    ? { ...existing, description: `${existing.description}; or the database is not reachable (Retry-After header)` }
    : { description: STORE_UNAVAILABLE, schema: 'common.error.json' };
  return { ...responses, '503': response };
}

type DocumentedResponse = RouteDoc['responses'][string];

/**
 * The `content` of one answer: each media type it declares, even without a schema (an HTML page
 * or plain text is a string), so a client learns every type the route may answer with.
 */
function contentOf(r: DocumentedResponse): Record<string, unknown> | undefined {
  const schema = r.schema ? (r.array ? { type: 'array', items: schemaRef(r.schema) } : schemaRef(r.schema)) : undefined;
  const types = r.contentType === undefined ? [] : typeof r.contentType === 'string' ? [r.contentType] : [...r.contentType];
  if (types.length === 0) return schema ? { 'application/json': { schema } } : undefined;
  const describedBySchema = (type: string) => schema !== undefined && (types.length === 1 || type === 'application/json');
  return Object.fromEntries(types.map((type) => [type, { schema: describedBySchema(type) ? schema : { type: 'string' } }]));
}

function operation(doc: RouteDoc): Record<string, unknown> {
  const op: Record<string, unknown> = {
    summary: doc.summary,
    tags: [doc.tag],
    responses: Object.fromEntries(
      Object.entries(withStoreUnavailable(doc, responsesOf(doc)))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([status, r]) => {
          const content = contentOf(r);
          return [
            status,
            {
              description: r.description,
              ...(content ? { content } : {}),
              ...(r.headers ? { headers: r.headers } : {}),
              ...(r.links ? { links: linksOf(r.links) } : {}),
            },
          ];
        }),
    ),
  };
  // A pasted token (bearerToken) is the alternative to the client-credentials login of the docs page.
  if (doc.auth.kind === 'bearer') op.security = [{ oauth2: [doc.auth.scope] }, { bearerToken: [] }];
  else if (doc.auth.kind === 'user') op.security = [{ bearerToken: [] }];
  else if (doc.auth.kind === 'admin') op.security = [{ adminToken: [] }];
  else op.security = [];
  if (doc.requestSchema) {
    op.requestBody = {
      required: true,
      content: { [doc.requestContentType ?? 'application/json']: { schema: schemaRef(doc.requestSchema) } },
    };
  }
  const params: Record<string, unknown>[] = [...doc.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  for (const q of doc.query ?? [])
    params.push({
      name: q.name,
      in: 'query',
      required: q.required ?? false,
      description: q.description,
      schema: toComponentRefs(q.schema),
    });
  for (const h of doc.headers ?? [])
    params.push({ name: h.name, in: 'header', required: h.required ?? false, description: h.description, schema: h.schema });
  if (params.length > 0) op.parameters = params;
  return op;
}

export function buildOpenApiDocument(
  publicUrl: string,
  docs: RouteDoc[] = routeDocs,
  schemas: JsonSchema[] = loadSchemas(),
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of docs) {
    paths[doc.path] ??= {};
    paths[doc.path][doc.method] = operation(doc);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc-identity',
      // The release that serves it (GET / names the same): the document is generated from its routes.
      version: serviceRelease.version,
      description: 'OTPs, user enrollment, approval notifications and an OAuth 2.0 authorization server.',
    },
    servers: [{ url: publicUrl }],
    paths,
    components: {
      schemas: Object.fromEntries(schemas.map((s) => [componentName(s.$id), toComponentRefs(s)])),
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          flows: {
            clientCredentials: {
              tokenUrl: `${publicUrl}/svc/authserver/oauth/token`,
              scopes: { otp: 'Generate and validate OTPs', users: 'Enroll users', notifications: 'Create and query notifications' },
            },
          },
        },
        bearerToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An access token pasted as is: an enterprise token (client_credentials) for /v1 enterprise routes, a user token (authorization code flow) for /v1/me',
        },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN of the deployment' },
      },
    },
  };
}
