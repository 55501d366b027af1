import { buildOpenApiDocument } from '../../api/openapi/openapi-document.js';
import { routeDocs } from '../../api/openapi/route-docs.js';
import type { RouteDoc } from '../../api/openapi/route-docs.types.js';
import { getAjv, loadSchemas, type JsonSchema } from '../../core/platform/schemas/schema-registry.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { mintUserToken, registerAppClient } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/** Every `example` (one value) and `examples` (a list) in a schema, with the JSON Pointer of the schema it belongs to. */
function examplesIn(node: unknown, pointer = ''): { pointer: string; value: unknown }[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => examplesIn(item, `${pointer}/${i}`));
  if (!node || typeof node !== 'object') return [];
  const found: { pointer: string; value: unknown }[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'example') found.push({ pointer, value });
    else if (key === 'examples' && Array.isArray(value)) found.push(...value.map((item) => ({ pointer, value: item })));
    else found.push(...examplesIn(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  }
  return found;
}

const requestExamples = (doc: RouteDoc): unknown[] => {
  const schema = loadSchemas().find((s) => s.$id === doc.requestSchema);
  return Array.isArray(schema?.examples) ? schema.examples : [];
};

describe('OpenAPI examples', () => {
  test('when a schema gives an example, then the example is valid against that schema', () => {
    const ajv = getAjv();
    const checked: string[] = [];
    const invalid: string[] = [];
    for (const schema of loadSchemas() as JsonSchema[]) {
      for (const { pointer, value } of examplesIn(schema)) {
        const validate = ajv.compile({ $ref: `${schema.$id}#${pointer}` });
        checked.push(`${schema.$id}#${pointer}`);
        if (!validate(value)) invalid.push(`${schema.$id}#${pointer}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(invalid).toEqual([]);
    expect(checked.length).toBeGreaterThan(10);
  });

  test('when the document is built, then every example is carried into it', () => {
    const document = JSON.stringify(buildOpenApiDocument('http://localhost'));
    for (const schema of loadSchemas()) {
      for (const { value } of examplesIn(schema)) expect(document).toContain(JSON.stringify(value));
    }
  });

  describe('sent to the running service', () => {
    let service: TestService;
    const auth: Record<string, string> = {};
    beforeAll(async () => {
      service = await startTestService('openapi-examples');
      auth.admin = `Bearer ${service.config.adminToken ?? ''}`;
      const { accessToken } = await createClientWithToken(service, { scopes: ['otp', 'users', 'notifications'] });
      auth.bearer = `Bearer ${accessToken}`;
      // The user routes' examples are sent by a signed-in user of the approver app.
      await insertUser(service.ctx.mongo, { userId: 'example-user' });
      auth.user = `Bearer ${await mintUserToken(service, { userId: 'example-user', clientId: await registerAppClient(service) })}`;
    });
    afterAll(async () => {
      await service.close();
    });

    // In the order a newcomer would follow them: the group the user joins, the user the OTP goes to.
    const ORDER = [
      'post /admin/groups',
      'post /admin/templates',
      'post /v1/users',
      'patch /v1/users/{userId}',
      'post /v1/svc-otp',
      'post /admin/deliveries/replay',
      'post /v1/me/push-subscriptions',
    ];
    // Path parameters name what an earlier example made: the user the Add user example enrolls.
    const PATH_PARAMS: Record<string, string> = { userId: 'alice' };

    test('when each request example is sent as documented, then the service answers a documented success', async () => {
      const withExamples = routeDocs.filter((doc) => requestExamples(doc).length > 0);
      const names = withExamples.map((doc) => `${doc.method} ${doc.path}`);
      // An example on a route this test does not know yet must be added to ORDER (with what it needs).
      expect(names.filter((name) => !ORDER.includes(name))).toEqual([]);
      expect(ORDER.filter((name) => !names.includes(name))).toEqual([]);

      const answers: string[] = [];
      for (const name of ORDER) {
        const doc = withExamples.find((d) => `${d.method} ${d.path}` === name) as RouteDoc;
        for (const example of requestExamples(doc)) {
          const path = doc.path.replace(/\{(\w+)\}/g, (_, name: string) => PATH_PARAMS[name] ?? `{${name}}`);
          const res = await fetch(`${service.url}${path}`, {
            method: doc.method.toUpperCase(),
            headers: {
              'content-type': doc.requestContentType ?? 'application/json',
              ...(doc.auth.kind === 'admin' ? { authorization: auth.admin } : {}),
              ...(doc.auth.kind === 'bearer' ? { authorization: auth.bearer } : {}),
              ...(doc.auth.kind === 'user' ? { authorization: auth.user } : {}),
            },
            body: JSON.stringify(example),
          });
          const status = String(res.status);
          const body = await res.text();
          const success = status.startsWith('2') && doc.responses[status] !== undefined;
          answers.push(success ? `${name} documented success` : `${name} ${status} ${body}`);
        }
      }
      // One documented success per example (a route may document several, e.g. 201 created and 200 already there).
      expect(answers).toEqual(
        ORDER.flatMap((name) => {
          const doc = withExamples.find((d) => `${d.method} ${d.path}` === name) as RouteDoc;
          return requestExamples(doc).map(() => `${name} documented success`);
        }),
      );
    });
  });
});
