import { requireBearer } from '../../api/middleware/bearer-auth.middleware.js';
import { requireAllowedIp } from '../../api/middleware/ip-allow-list.middleware.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startMiddlewareApp } from '../support/middleware-app.js';
import { startTestService, type TestService } from '../support/test-service.js';

const D1_TIMESTAMP = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/;
const notWhitelisted = { timestamp: expect.stringMatching(D1_TIMESTAMP), status: 401, error: 'Unauthorized', message: 'IP not whitelisted', path: '/probe' };

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
    const started = await startMiddlewareApp(service.ctx, [requireBearer(service.ctx, 'users'), requireAllowedIp(service.ctx)], options);
    apps.push(started);
    return started;
  }

  const call = (url: string, token: string, headers: Record<string, string> = {}) => fetch(`${url}/probe`, { headers: { authorization: `Bearer ${token}`, ...headers } });

  test('when the IPv4 socket address is in the list, then the call goes through', async () => {
    const { url } = await app();
    const { clientId, accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['127.0.0.0/8'] });
    const res = await call(url, accessToken);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ auth: { clientId, scopes: ['users'] } });
  });

  test('when the IPv4 socket address is outside the list, then 401 IP not whitelisted', async () => {
    const { url } = await app();
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['10.0.0.0/8', '::1/128'] });
    const res = await call(url, accessToken);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(notWhitelisted);
  });

  test('when the client has no allowed ranges, then every address is refused', async () => {
    const { url } = await app();
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: [] });
    const res = await call(url, accessToken);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(notWhitelisted);
  });

  test('when the caller connects over IPv6 loopback, then IPv6 ranges decide', async () => {
    const { url } = await app({ host: '::1' });
    const allowed = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['::1/128'] });
    const refused = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['127.0.0.1/32'] });
    const ok = await call(url, allowed.accessToken);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ auth: { clientId: allowed.clientId, scopes: ['users'] } });
    const no = await call(url, refused.accessToken);
    expect(no.status).toBe(401);
    expect(await no.json()).toEqual(notWhitelisted);
  });

  test('when proxies are not trusted, then X-Forwarded-For is ignored', async () => {
    const { url } = await app({ trustProxy: false });
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['203.0.113.0/24'] });
    const res = await call(url, accessToken, { 'x-forwarded-for': '203.0.113.5' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(notWhitelisted);
  });

  test('when one proxy hop is trusted (TRUST_PROXY=1), then the last X-Forwarded-For address decides', async () => {
    const { url } = await app({ trustProxy: 1 });
    const { clientId, accessToken } = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['203.0.113.0/24'] });
    const ok = await call(url, accessToken, { 'x-forwarded-for': '198.51.100.1, 203.0.113.5' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ auth: { clientId, scopes: ['users'] } });
    // A spoofed first hop does not help when the proxy-added last hop is outside the list.
    const spoofed = await call(url, accessToken, { 'x-forwarded-for': '203.0.113.5, 198.51.100.1' });
    expect(spoofed.status).toBe(401);
    expect(await spoofed.json()).toEqual(notWhitelisted);
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
      const started = await startMiddlewareApp(proxied.ctx, [requireBearer(proxied.ctx, 'users'), requireAllowedIp(proxied.ctx)]);
      apps.push(started);
      const { accessToken } = await createClientWithToken(proxied, { scopes: ['users'], allowedIps: ['198.51.100.0/24'] });
      const res = await call(started.url, accessToken, { 'x-forwarded-for': '198.51.100.9' });
      expect(res.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});
