import { loadSchemas, type JsonSchema } from '../../core/schemas/schema-registry.js';
import { routeDocs, type RouteDoc } from './route-docs.js';

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

function operation(doc: RouteDoc): Record<string, unknown> {
  const op: Record<string, unknown> = {
    summary: doc.summary,
    tags: [doc.tag],
    responses: Object.fromEntries(
      Object.entries(doc.responses).map(([status, r]) => [
        status,
        { description: r.description, ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: schemaRef(r.schema) } } } : {}) },
      ]),
    ),
  };
  if (doc.auth.kind === 'bearer') op.security = [{ oauth2: [doc.auth.scope] }];
  else if (doc.auth.kind === 'user') op.security = [{ userToken: [doc.auth.scope] }];
  else if (doc.auth.kind === 'admin') op.security = [{ adminToken: [] }];
  else op.security = [];
  if (doc.requestSchema) {
    op.requestBody = { required: true, content: { [doc.requestContentType ?? 'application/json']: { schema: schemaRef(doc.requestSchema) } } };
  }
  const params = [...doc.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  if (params.length > 0) op.parameters = params;
  return op;
}

export function buildOpenApiDocument(publicUrl: string, docs: RouteDoc[] = routeDocs, schemas: JsonSchema[] = loadSchemas()): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of docs) {
    paths[doc.path] ??= {};
    paths[doc.path][doc.method] = operation(doc);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc-identity', version: '1.0.0', description: 'OTPs, user enrollment, approval notifications and an OAuth 2.0 authorization server.' },
    servers: [{ url: publicUrl }],
    paths,
    components: {
      schemas: Object.fromEntries(schemas.map((s) => [componentName(s.$id), toComponentRefs(s)])),
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          flows: { clientCredentials: { tokenUrl: `${publicUrl}/svc/authserver/oauth/token`, scopes: { otp: 'Generate and validate OTPs', users: 'Enroll users', notifications: 'Create and query notifications' } } },
        },
        userToken: {
          type: 'oauth2',
          description: "A user's access token (authorization code flow); its subject is the userId. Only /v1/me/... accepts it.",
          flows: {
            authorizationCode: {
              authorizationUrl: `${publicUrl}/svc/authserver/oauth/authorize`,
              tokenUrl: `${publicUrl}/svc/authserver/oauth/token`,
              scopes: { notifications: "Read and answer the user's notifications" },
            },
          },
        },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN of the deployment' },
      },
    },
  };
}
