import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/platform/project-root.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('health, readiness and unknown routes', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('health');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when the process runs, then /healthz answers 200', async () => {
    const res = await fetch(`${service.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  test('when MongoDB and Redis answer, then /readyz is 200 and names both up', async () => {
    const res = await fetch(`${service.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { mongodb: 'up', redis: 'up' }, down: [] });
  });

  test('when an API client asks for the root, then JSON names the service, its version and where to go', async () => {
    const res = await fetch(`${service.url}/`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toContain('Accept');
    const body = (await res.json()) as { name: string; version: string; links: Record<string, string> };
    expect(body).toEqual({
      name: 'svc-identity',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      links: {
        docs: '/docs',
        openapi: '/openapi.json',
        discovery: '/svc/authserver/.well-known/openid-configuration',
        health: '/healthz',
        readiness: '/readyz',
        metrics: '/metrics',
        queues: '/admin/queues',
      },
    });
    // Every link leads somewhere (the dashboard asks for the admin token).
    for (const href of Object.values(body.links)) {
      const linked = await fetch(`${service.url}${href}`);
      await linked.body?.cancel();
      expect([href, [200, 401].includes(linked.status)]).toEqual([href, true]);
    }
  });

  test('when the root and the OpenAPI document are asked, then both name the release that serves them: the version of package.json', async () => {
    // The document is generated from the routes of the code that serves it, so it changes with
    // each release: its info.version is that release's, as the root's version is.
    const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
    const root = (await (await fetch(`${service.url}/`, { headers: { accept: 'application/json' } })).json()) as { version: string };
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { info: { version: string } };
    expect({ root: root.version, openapi: document.info.version }).toEqual({ root: version, openapi: version });
    const page = await (await fetch(`${service.url}/`, { headers: { accept: 'text/html' } })).text();
    expect(page).toContain(`<small>${version}</small>`);
  });

  test('when a browser asks for the root, then an HTML page that runs nothing', async () => {
    const res = await fetch(`${service.url}/`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain('<a href="/docs">');
    expect(html).not.toContain('<script');
  });

  test('when a route does not exist, then 404 in the error body shape', async () => {
    const res = await fetch(`${service.url}/nope?x=1`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      timestamp: expect.stringMatching(/^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/),
      status: 404,
      error: 'Not Found',
      message: 'No route for GET /nope',
      path: '/nope',
    });
  });
});
