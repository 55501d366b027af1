import { routeDocs } from '../../api/openapi/route-docs.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';

// Every 422 of the JSON APIs carries the spec's label for a validation error (`Invalid data.`,
// Add user's table): an integrator matches one label, whichever route refused the value.

/** A request each documented 422 of the admin API answers with a 422, keyed `METHOD path`. */
interface Refused {
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

const TOO_LONG_KEY = { 'idempotency-key': 'k'.repeat(256) };
const BAD_OWNER = '?enterpriseId=not%20an%20id';

function refusedRequests(clientId: string): Record<string, Refused> {
  return {
    'POST /admin/clients': { path: '/admin/clients', body: { name: 'labels', scopes: 'otp' } },
    'GET /admin/clients': { path: '/admin/clients?limit=0' },
    'POST /admin/clients/{clientId}/secret': { path: `/admin/clients/${clientId}/secret`, headers: TOO_LONG_KEY },
    'POST /admin/clients/{clientId}/callback-secret': { path: `/admin/clients/${clientId}/callback-secret`, headers: TOO_LONG_KEY },
    'PATCH /admin/clients/{clientId}': { path: `/admin/clients/${clientId}`, body: { scopes: 'otp' } },
    'POST /admin/groups': { path: '/admin/groups', body: { name: 'a,b' } },
    'GET /admin/groups': { path: '/admin/groups?limit=0' },
    'GET /admin/groups/{name}': { path: `/admin/groups/staff${BAD_OWNER}` },
    'DELETE /admin/groups/{name}': { path: `/admin/groups/staff${BAD_OWNER}` },
    'GET /admin/activity': { path: '/admin/activity?limit=0' },
    'PUT /admin/users/{userId}/blocked': { path: '/admin/users/alice/blocked', body: { blocked: 'yes' } },
    'DELETE /admin/users/{userId}/sign-in-lock': { path: `/admin/users/alice/sign-in-lock${BAD_OWNER}` },
    'POST /admin/signing-keys/rotation': { path: '/admin/signing-keys/rotation?retireAtOnce=maybe' },
    'GET /admin/users/{userId}/passkeys': { path: `/admin/users/alice/passkeys${BAD_OWNER}` },
    'DELETE /admin/users/{userId}/passkeys/{passkeyId}': { path: `/admin/users/alice/passkeys/p1${BAD_OWNER}` },
    'POST /admin/users/{userId}/activation': { path: `/admin/users/alice/activation${BAD_OWNER}` },
    'GET /admin/templates': { path: `/admin/templates${BAD_OWNER}` },
    'GET /admin/templates/{name}': { path: `/admin/templates/otp_sms${BAD_OWNER}` },
    'POST /admin/templates': { path: '/admin/templates', body: { name: 'labels', channel: 'FAX', body: 'x' } },
    'PUT /admin/templates/{name}': { path: '/admin/templates/otp_sms', body: { channel: 'FAX' } },
    'DELETE /admin/templates/{name}': { path: `/admin/templates/otp_sms${BAD_OWNER}` },
    'GET /admin/outbox': { path: '/admin/outbox?limit=0' },
    'GET /admin/deliveries': { path: '/admin/deliveries?state=NOPE' },
    'POST /admin/deliveries/replay': { path: '/admin/deliveries/replay', body: {} },
  };
}

/** `METHOD path` of every admin operation whose OpenAPI entry documents a JSON 422. */
const documentedAdmin422s = routeDocs
  .filter((doc) => doc.path.startsWith('/admin') && doc.responses['422'] && doc.responses['422'].contentType === undefined)
  .map((doc) => `${doc.method.toUpperCase()} ${doc.path}`)
  .sort();

describe('422 labels', () => {
  let service: TestService;
  let clientId: string;
  beforeAll(async () => {
    service = await startTestService('admin-422-labels');
    const created = await fetch(`${service.url}/admin/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'labels-owner', scopes: ['otp'] }),
    });
    clientId = ((await created.json()) as { client_id: string }).client_id;
  });
  afterAll(async () => {
    await service.close();
  });

  test('the walk below covers every admin operation that documents a 422, and only those', () => {
    expect(Object.keys(refusedRequests('c')).sort()).toEqual(documentedAdmin422s);
  });

  test.each(documentedAdmin422s)('%s: a refused value is 422 with error "Invalid data."', async (operation) => {
    const method = operation.split(' ')[0] as string;
    const request = refusedRequests(clientId)[operation] as Refused;
    const res = await fetch(`${service.url}${request.path}`, {
      method,
      headers: {
        authorization: `Bearer ${service.config.adminToken}`,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...request.headers,
      },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    });
    const body = (await res.json()) as { status: number; error: string; message: string; path: string };
    expect({ status: res.status, error: body.error }).toEqual({ status: 422, error: 'Invalid data.' });
    expect(body.status).toBe(422);
    expect(body.message).toMatch(/Invalid field|Idempotency-Key|ids or filter/);
    expect(body.path).toBe(request.path.split('?')[0]);
  });

  // The enterprise API had the same split: Add user said `Invalid data.`, OTP and notifications
  // said `Invalid data.`.
  test.each([
    ['POST /v1/svc-otp', '/v1/svc-otp', otpBody('alice', { attempts: 0 })],
    ['POST /v1/svc-otp/{otpUuid}/validate', '/v1/svc-otp/00000000-0000-4000-8000-000000000000/validate', { otp: 42 }],
    ['POST /v1/notifications', '/v1/notifications', { userId: 'alice', body: [], actions: [] }],
    ['POST /v1/users', '/v1/users', { userId: 'alice' }],
  ])('%s: a refused value is 422 with error "Invalid data."', async (_operation, path, body) => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['otp', 'notifications', 'users'] });
    const res = await postJson(`${service.url}${path}`, accessToken, body);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: string }).error).toBe('Invalid data.');
  });
});
