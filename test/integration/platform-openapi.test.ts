import { buildApp } from '../../api/app.js';
import { listAppRoutes } from '../support/list-app-routes.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('OpenAPI document and docs page', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('openapi');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when the app serves a route, then the OpenAPI document lists it', async () => {
    const res = await fetch(`${service.url}/openapi.json`);
    expect(res.status).toBe(200);
    const document = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(document.openapi).toBe('3.1.0');
    const served = listAppRoutes(buildApp(service.ctx)).filter((r) => !r.path.startsWith('/docs/') && !r.path.startsWith('/admin/queues/'));
    expect(served.length).toBeGreaterThan(3);
    const undocumented = served.filter((r) => document.paths[r.path]?.[r.method] === undefined);
    expect(undocumented).toEqual([]);
  });

  test('when a schema references another, then the reference points into components', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { components: { schemas: Record<string, unknown> } };
    const text = JSON.stringify(document);
    expect(text).not.toMatch(/"\$ref":"[^#]/);
    expect(document.components.schemas['common.error']).toMatchObject({ type: 'object' });
  });

  test('when the docs page is opened, then it and its assets are served locally', async () => {
    const page = await fetch(`${service.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${service.url}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100000);
  });
});
