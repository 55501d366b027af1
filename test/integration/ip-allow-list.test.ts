import { requireBearer } from '../../api/middleware/bearer-auth.middleware.js';
import { requireAllowedIp } from '../../api/middleware/ip-allow-list.middleware.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startMiddlewareApp } from '../support/middleware-app.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const D1_TIMESTAMP = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/;
const notWhitelisted = (address = '127.0.0.1') => ({
  timestamp: expect.stringMatching(D1_TIMESTAMP),
  status: 401,
  error: 'Unauthorized',
  message: 'IP not whitelisted',
  path: '/probe',
  detail: `The server saw the address ${address}; the client's allowedIps must include it.`,
});

describe('IP allow-list middleware', () => {
  let service: TestService;
  const apps: { close: () => Promise<void> }[] = [];
  beforeAll(async () => {
    service = await startTestService('ipallow');
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await service.close();
  });

  async function app(options: { trustProxy?: boolean | number | string; host?: string } = {}) {
    const started = await startMiddlewareApp(
      service.ctx,
      [requireBearer(service.ctx, service.services.bearer, 'users'), requireAllowedIp(service.services.clientLookup)],
      options,
    );
    apps.push(started);
    return started;
  }

  const call = (url: string, token: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/probe`, { headers: { authorization: `Bearer ${token}`, ...headers } });

  test('when the IPv4 socket address is in the list, then the call goes through', async () => {
    const { url } = await app();
    const { clientId, accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['127.0.0.0/8'] });
    const res = await call(url, accessToken);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ auth: { clientId, enterpriseId: 'default', scopes: ['users'], test: false, testCodes: {} } });
  });

  test('when the IPv4 socket address is outside the list, then 401 IP not whitelisted', async () => {
    const { url } = await app();
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['10.0.0.0/8', '::1/128'] });
    const res = await call(url, accessToken);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(notWhitelisted());
  });

  test('when the client has no allowed ranges, then every address is refused', async () => {
    const { url } = await app();
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: [] });
    const res = await call(url, accessToken);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(notWhitelisted());
  });

  test('when the caller connects over IPv6 loopback, then IPv6 ranges decide', async () => {
    const { url } = await app({ host: '::1' });
    const allowed = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['::1/128'] });
    const refused = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['127.0.0.1/32'] });
    const ok = await call(url, allowed.accessToken);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      auth: { clientId: allowed.clientId, enterpriseId: 'default', scopes: ['users'], test: false, testCodes: {} },
    });
    const no = await call(url, refused.accessToken);
    expect(no.status).toBe(401);
    expect(await no.json()).toEqual(notWhitelisted('::1'));
  });

  test('when proxies are not trusted, then X-Forwarded-For is ignored', async () => {
    const { url } = await app({ trustProxy: false });
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['203.0.113.0/24'] });
    const res = await call(url, accessToken, { 'x-forwarded-for': '203.0.113.5' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(notWhitelisted());
  });

  test('when one proxy hop is trusted (TRUST_PROXY=1), then the last X-Forwarded-For address decides', async () => {
    const { url } = await app({ trustProxy: 1 });
    const { clientId, accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['203.0.113.0/24'] });
    const ok = await call(url, accessToken, { 'x-forwarded-for': '198.51.100.1, 203.0.113.5' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ auth: { clientId, enterpriseId: 'default', scopes: ['users'], test: false, testCodes: {} } });
    // A spoofed first hop does not help when the proxy-added last hop is outside the list.
    const spoofed = await call(url, accessToken, { 'x-forwarded-for': '203.0.113.5, 198.51.100.1' });
    expect(spoofed.status).toBe(401);
    expect(await spoofed.json()).toEqual(notWhitelisted('198.51.100.1'));
  });

  test('when the trusted proxy is named by CIDR, then an IPv6 forwarded address is matched', async () => {
    const { url } = await app({ trustProxy: '127.0.0.1/8' });
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['2001:db8::/32'] });
    const res = await call(url, accessToken, { 'x-forwarded-for': '2001:db8::7' });
    expect(res.status).toBe(200);
  });

  test('when the service is configured with TRUST_PROXY, then the app uses it for the caller address', async () => {
    const proxied = await startTestService('ipallow-proxy', { TRUST_PROXY: '1' });
    try {
      expect(proxied.config.trustProxy).toBe(1);
      const started = await startMiddlewareApp(proxied.ctx, [
        requireBearer(proxied.ctx, proxied.services.bearer, 'users'),
        requireAllowedIp(proxied.services.clientLookup),
      ]);
      apps.push(started);
      const { accessToken } = await createClientWithToken(proxied, { scopes: ['users'], allowedIps: ['198.51.100.0/24'] });
      const res = await call(started.url, accessToken, { 'x-forwarded-for': '198.51.100.9' });
      expect(res.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  test('when a client outside its allow-list calls the OTP routes (generate, validate, status), then each is 401 IP not whitelisted and no OTP is sent', async () => {
    await insertUser(service.ctx.mongo, { userId: 'otp-ip-user', emailId: 'otp-ip@example.com' });
    const inside = await createClientWithToken(service, { scopes: ['otp'] });
    const outside = await createClientWithToken(service, { scopes: ['otp'], allowedIps: ['10.0.0.0/8'] });
    const body = otpBody('otp-ip-user', { dispatchOptions: { EMAIL: 'otp_email' } });
    const refused = await postJson(`${service.url}/v1/svc-otp`, outside.accessToken, body);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ ...notWhitelisted(), path: '/v1/svc-otp' });
    expect(await service.ctx.mongo.collection('otps').countDocuments({ userId: 'otp-ip-user' })).toBe(0);

    const accepted = await postJson(`${service.url}/v1/svc-otp`, inside.accessToken, body);
    expect(accepted.status).toBe(200);
    const { otpUuid } = (await accepted.json()) as { otpUuid: string };
    const validate = await postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, outside.accessToken, { otp: '000000' });
    expect(validate.status).toBe(401);
    expect(await validate.json()).toEqual({ ...notWhitelisted(), path: `/v1/svc-otp/${otpUuid}/validate` });
    const status = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${outside.accessToken}` } });
    expect(status.status).toBe(401);
    expect(await status.json()).toEqual({ ...notWhitelisted(), path: `/v1/svc-otp/${otpUuid}` });
  });

  test('when X-Forwarded-For names an allowed address but proxies are not trusted, then the OTP route still refuses', async () => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['otp'], allowedIps: ['203.0.113.0/24'] });
    const res = await postJson(`${service.url}/v1/svc-otp`, accessToken, otpBody('anyone'), { 'x-forwarded-for': '203.0.113.5' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ ...notWhitelisted(), path: '/v1/svc-otp' });
  });
});
