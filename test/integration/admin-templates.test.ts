import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { enqueueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { seedTemplates } from '../../core/templates/templates.seeder.js';
import { createActivationDeliveries } from '../../core/users/activation-deliveries.service.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson, readOutbox } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';

const D1_TIMESTAMP = expect.stringMatching(/^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/);

describe('message templates: seeding and admin API', () => {
  let service: TestService;
  let admin: Record<string, string>;
  beforeAll(async () => {
    service = await startTestService('templates');
    admin = { authorization: `Bearer ${service.config.adminToken ?? ''}`, 'content-type': 'application/json' };
  });
  afterAll(async () => {
    await service.close();
  });

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = admin) =>
    fetch(`${service.url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });

  test('when the service starts, then the eighteen default templates (the login ones also in German, Spanish, French and Portuguese) are seeded', async () => {
    const res = await call('GET', '/admin/templates');
    expect(res.status).toBe(200);
    const list = (await res.json()) as { name: string; channel: string; version: number; source: string }[];
    expect(list.map(({ name, channel, version, source }) => ({ name, channel, version, source }))).toEqual([
      { name: 'activation_email', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'activation_sms', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'login_email', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'login_email.de', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'login_email.es', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'login_email.fr', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'login_email.pt', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'login_sms', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'login_sms.de', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'login_sms.es', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'login_sms.fr', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'login_sms.pt', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'otp_email', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'otp_sms', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'passkey_added_email', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'passkey_added_sms', channel: 'SMS', version: 1, source: 'seed' },
      { name: 'passkey_removed_email', channel: 'EMAIL', version: 1, source: 'seed' },
      { name: 'passkey_removed_sms', channel: 'SMS', version: 1, source: 'seed' },
    ]);
  });

  test('when an admin edited a default template, then seeding again keeps the edit', async () => {
    const put = await call('PUT', '/admin/templates/otp_sms', { channel: 'SMS', text: 'Code: __SVC_OTP__' });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({
      name: 'otp_sms',
      channel: 'SMS',
      text: 'Code: __SVC_OTP__',
      version: 2,
      source: 'admin',
      updatedAt: ISO,
    });
    const result = await seedTemplates(service.services.repositories.templates, service.ctx.logger);
    expect(result).toEqual({
      inserted: [],
      kept: [
        'activation_email',
        'activation_sms',
        'login_email',
        'login_email.de',
        'login_email.es',
        'login_email.fr',
        'login_email.pt',
        'login_sms',
        'login_sms.de',
        'login_sms.es',
        'login_sms.fr',
        'login_sms.pt',
        'otp_email',
        'otp_sms',
        'passkey_added_email',
        'passkey_added_sms',
        'passkey_removed_email',
        'passkey_removed_sms',
      ],
    });
    const res = await call('GET', '/admin/templates/otp_sms');
    expect(await res.json()).toEqual({
      name: 'otp_sms',
      channel: 'SMS',
      text: 'Code: __SVC_OTP__',
      version: 2,
      source: 'admin',
      updatedAt: ISO,
    });
  });

  test('when a new e-mail template is posted, then 201 with the stored template and a Location', async () => {
    const body = {
      name: 'welcome_email',
      channel: 'EMAIL',
      subject: 'Hi __FIRST_NAME__',
      text: 'Hello __FIRST_NAME__',
      html: '{{#> layouts/email title="Hi"}}<p>__FIRST_NAME__</p>{{/layouts/email}}',
    };
    const res = await call('POST', '/admin/templates', body);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe('/admin/templates/welcome_email');
    expect(await res.json()).toEqual({ ...body, version: 1, source: 'admin', updatedAt: ISO });
  });

  test('when templates are listed, then each comes without its HTML, which reading the one template shows', async () => {
    const list = (await (await call('GET', '/admin/templates')).json()) as Record<string, unknown>[];
    const otpEmail = list.find((template) => template.name === 'otp_email');
    expect(otpEmail).toEqual({
      name: 'otp_email',
      channel: 'EMAIL',
      subject: expect.any(String),
      text: expect.any(String),
      version: expect.any(Number),
      source: expect.any(String),
      updatedAt: ISO,
    });
    for (const template of list) expect(template).not.toHaveProperty('html');
    expect(((await (await call('GET', '/admin/templates/otp_email')).json()) as { html: string }).html).toContain('{{#> layouts/email');
  });

  test('when the name exists, then 409 in the error body', async () => {
    const res = await call('POST', '/admin/templates', { name: 'otp_email', channel: 'SMS', text: 'x' });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 409,
      error: 'Conflict',
      message: 'Template otp_email already exists',
      path: '/admin/templates',
    });
  });

  test('when the HTML does not compile, then 422 naming the Handlebars problem', async () => {
    const res = await call('POST', '/admin/templates', {
      name: 'broken',
      channel: 'EMAIL',
      subject: 's',
      text: 't',
      html: '<p>{{#if}}</p>',
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 422,
      error: 'Invalid data.',
      // Where, and what the parser expected and got: not only "Parse error on line 1:".
      message: expect.stringMatching(/^Invalid template html: Parse error on line 1: Expecting '\w+'.*, got '\w+'$/),
      path: '/admin/templates',
    });
  });

  test('when the HTML nests inline partials that each call the one below twice, then 422 naming the limit on partial calls', async () => {
    // 2^22 partial calls: seconds of the event loop without the limit, twice that with each more
    // level; 40 levels would block the process for days.
    let html = '{{#*inline "p0"}}{{/inline}}';
    for (let level = 1; level <= 22; level += 1) html += `{{#*inline "p${level}"}}{{>p${level - 1}}}{{>p${level - 1}}}{{/inline}}`;
    html += '{{>p22}}';
    const res = await call('POST', '/admin/templates', { name: 'fan_out', channel: 'EMAIL', subject: 's', text: 't', html });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 422,
      error: 'Invalid data.',
      message: 'Invalid template html: partials are called more than 1000 times',
      path: '/admin/templates',
    });
    expect((await call('GET', '/admin/templates/fan_out')).status).toBe(404);
  });

  test('when the HTML names an unknown partial on update, then 422 and the template is unchanged', async () => {
    const res = await call('PUT', '/admin/templates/otp_email', {
      channel: 'EMAIL',
      subject: 's',
      text: 't',
      html: '{{> missing_partial}}',
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 422,
      error: 'Invalid data.',
      message: 'Invalid template html: The partial missing_partial could not be found',
      path: '/admin/templates/otp_email',
    });
    expect(((await (await call('GET', '/admin/templates/otp_email')).json()) as { version: number }).version).toBe(1);
  });

  test('when a field is missing or unknown, then 422 naming it; when the body is not JSON, then 400', async () => {
    const missing = await call('POST', '/admin/templates', { name: 'x', channel: 'SMS' });
    expect(await missing.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 422,
      error: 'Invalid data.',
      message: '[Invalid field text]',
      path: '/admin/templates',
    });
    const email = await call('POST', '/admin/templates', { name: 'x', channel: 'EMAIL', text: 't' });
    expect(await email.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 422,
      error: 'Invalid data.',
      message: '[Invalid field subject]',
      path: '/admin/templates',
    });
    const malformed = await call('POST', '/admin/templates', '{"name":');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 400,
      error: 'Bad Request',
      message: 'Malformed request body',
      path: '/admin/templates',
    });
  });

  test('when the template to update does not exist, then 404', async () => {
    const res = await call('PUT', '/admin/templates/nope', { channel: 'SMS', text: 'x' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 404,
      error: 'Not Found',
      message: 'Template not found',
      path: '/admin/templates/nope',
    });
  });

  test('when a template an admin created is deleted, then 204, it is gone and the activity record says so', async () => {
    await call('POST', '/admin/templates', { name: 'short_lived', channel: 'SMS', text: 'Code: __SVC_OTP__' });
    const res = await call('DELETE', '/admin/templates/short_lived');
    expect(res.status).toBe(204);
    expect((await call('GET', '/admin/templates/short_lived')).status).toBe(404);
    const entries = await service.ctx.mongo.collection('activity').find({ templateName: 'short_lived' }).sort({ _id: 1 }).toArray();
    expect(entries.map((entry) => entry.action)).toEqual(['template.created', 'template.deleted']);
    const again = await call('DELETE', '/admin/templates/short_lived');
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 404,
      error: 'Not Found',
      message: 'Template not found',
      path: '/admin/templates/short_lived',
    });
  });

  test('when a default template is deleted, then 409 and it stays', async () => {
    for (const name of ['otp_sms', 'login_email', 'activation_sms']) {
      const res = await call('DELETE', `/admin/templates/${name}`);
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({
        timestamp: D1_TIMESTAMP,
        status: 409,
        error: 'Conflict',
        message: `Template ${name} is a default template the service needs; update it instead of deleting it`,
        path: `/admin/templates/${name}`,
      });
      expect((await call('GET', `/admin/templates/${name}`)).status).toBe(200);
    }
  });

  test('when the admin token is missing or wrong, then 401 Unauthorized on every admin route', async () => {
    for (const [method, path, headers] of [
      ['GET', '/admin/templates', {}],
      ['POST', '/admin/templates', { authorization: 'Bearer wrong-token', 'content-type': 'application/json' }],
      ['PUT', '/admin/templates/otp_sms', { authorization: 'Basic abc' }],
      ['DELETE', '/admin/templates/otp_sms', {}],
      ['GET', '/admin/outbox', { authorization: `Bearer ${service.config.adminToken ?? ''}x` }],
    ] as const) {
      const res = await call(method, path, method === 'GET' ? undefined : { channel: 'SMS', text: 'x' }, headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        timestamp: D1_TIMESTAMP,
        status: 401,
        error: 'Unauthorized',
        message: 'Invalid or missing admin token',
        path,
      });
    }
  });

  test("when a template belongs to one enterprise, then that enterprise's OTPs use it, another's get the answer of a name that does not exist, and its owner cannot be changed", async () => {
    const created = await call('POST', '/admin/templates', {
      name: 'acme_otp_sms',
      channel: 'SMS',
      text: 'ACME code: __SVC_OTP__',
      enterpriseId: 'acmeowner',
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name: 'acme_otp_sms', enterpriseId: 'acmeowner' });
    expect(
      ((await (await call('GET', '/admin/templates')).json()) as { name: string; enterpriseId?: string }[]).find(
        (t) => t.name === 'acme_otp_sms',
      ),
    ).toMatchObject({ enterpriseId: 'acmeowner' });

    const acme = await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'acmeowner' });
    const other = await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'otherent' });
    await insertUser(service.ctx.mongo, { enterpriseId: 'acmeowner', userId: 'tpl-ann', mobileNumber: '+15550660001' });
    await insertUser(service.ctx.mongo, { enterpriseId: 'otherent', userId: 'tpl-bob', mobileNumber: '+15550660002' });

    // The dispatch worker renders with the template again: it must find it for this enterprise too.
    const worker = await startDispatchWorker(service.config, memoryLogger().logger);
    const own = await postJson(
      `${service.url}/v1/svc-otp`,
      acme.accessToken,
      otpBody('tpl-ann', { dispatchOptions: { SMS: 'acme_otp_sms' } }),
    );
    expect(own.status).toBe(200);
    const { otpUuid } = (await own.json()) as { otpUuid: string };
    try {
      expect((await outboxMessageFor(service, '+15550660001', otpUuid)).text).toMatch(/^ACME code: /);
    } finally {
      await worker.shutdown();
    }

    const refusalOf = async (template: string) => {
      const res = await postJson(
        `${service.url}/v1/svc-otp`,
        other.accessToken,
        otpBody('tpl-bob', { dispatchOptions: { SMS: template } }),
      );
      return { status: res.status, message: ((await res.json()) as { message: string }).message.replace(template, '<name>') };
    };
    expect(await refusalOf('acme_otp_sms')).toEqual(await refusalOf('no_such_template'));
    expect(await refusalOf('acme_otp_sms')).toEqual({
      status: 422,
      message: "dispatchOptions.SMS: template '<name>' does not exist for channel SMS",
    });
    // The shared defaults still serve everyone.
    expect((await postJson(`${service.url}/v1/svc-otp`, other.accessToken, otpBody('tpl-bob'))).status).toBe(200);

    // An update changes the content, never the owner; an owner in the update body is refused.
    // (The owner is named in the query: without it, a name means the shared template.)
    const updated = await call('PUT', '/admin/templates/acme_otp_sms?enterpriseId=acmeowner', {
      channel: 'SMS',
      text: 'ACME: __SVC_OTP__',
    });
    expect(await updated.json()).toMatchObject({ enterpriseId: 'acmeowner', version: 2 });
    expect(
      (
        await call('PUT', '/admin/templates/acme_otp_sms?enterpriseId=acmeowner', {
          channel: 'SMS',
          text: 'x __SVC_OTP__',
          enterpriseId: 'otherent',
        })
      ).status,
    ).toBe(422);
  });
  test("when an enterprise has its own template of a shared name, then that enterprise's OTP and activation messages use it, every other enterprise's still use the shared one, and deleting it brings the shared one back", async () => {
    const own = async (name: string, text: string) =>
      (await call('POST', '/admin/templates', { name, channel: 'SMS', text, enterpriseId: 'brandb' })).status;
    expect(await own('otp_sms', 'Brand B code: __SVC_OTP__')).toBe(201);
    expect(await own('activation_sms', 'Brand B welcomes __FIRST_NAME__: __ACTIVATION_LINK__ __ACTIVATION_CODE__')).toBe(201);

    const brandb = await createClientWithToken(service, { scopes: ['otp', 'users'], enterpriseId: 'brandb' });
    const other = await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'brandc' });
    await insertUser(service.ctx.mongo, { enterpriseId: 'brandb', userId: 'ovr-bea', mobileNumber: '+15550661001' });
    await insertUser(service.ctx.mongo, { enterpriseId: 'brandc', userId: 'ovr-cid', mobileNumber: '+15550661002' });
    await createGroups(service, ['retail']);
    expect(
      (
        await sendJson(`${service.url}/v1/users`, 'POST', brandb.accessToken, {
          ...userBody('ovr-new'),
          emailId: undefined,
          mobileNumber: '+15550661003',
        })
      ).status,
    ).toBe(201);

    // The shared template's message, whatever an earlier test made of its text.
    const sharedText = async (name: string) => {
      const { text } = (await (await call('GET', `/admin/templates/${name}`)).json()) as { text: string };
      return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('__SVC_OTP__', '\\d+')}$`);
    };
    const worker = await startDispatchWorker(service.config, memoryLogger().logger);
    const smsOf = async (token: string, userId: string, to: string) => {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId));
      expect(res.status).toBe(200);
      return (await outboxMessageFor(service, to, ((await res.json()) as { otpUuid: string }).otpUuid)).text;
    };
    try {
      expect(await smsOf(brandb.accessToken, 'ovr-bea', '+15550661001')).toMatch(/^Brand B code: \d+$/);
      expect(await smsOf(other.accessToken, 'ovr-cid', '+15550661002')).toMatch(await sharedText('otp_sms'));

      // The enrollment worker's step: the activation message of brandb's new user.
      await createActivationDeliveries({
        users: createUsersRepository(service.ctx.mongo),
        deliveries: createDeliveriesRepository(service.ctx.mongo),
        enqueueDispatch: (id) => enqueueDispatch(service.ctx.queues.dispatch, id),
        keys: otpKeysFromConfig(service.config),
        activationAppUrl: service.config.activationAppUrl,
        logger: memoryLogger().logger,
      }).prepareAndQueue({ enterpriseId: 'brandb', userId: 'ovr-new' }, 1);
      const [activation] = await eventually(async () => {
        const messages = await readOutbox(service, '+15550661003');
        return messages.length > 0 ? messages : undefined;
      });
      expect(activation?.text).toMatch(/^Brand B welcomes Ada: /);
    } finally {
      await worker.shutdown();
    }
    // Its own template deleted, the enterprise's messages use the shared one again: at once in this
    // process (a dispatch worker's cache keeps the deleted one up to 5 seconds, as for any edit).
    expect((await call('DELETE', '/admin/templates/otp_sms?enterpriseId=brandb')).status).toBe(204);
    const fresh = await startDispatchWorker(service.config, memoryLogger().logger);
    try {
      expect(await smsOf(brandb.accessToken, 'ovr-bea', '+15550661001')).toMatch(await sharedText('otp_sms'));
    } finally {
      await fresh.shutdown();
    }
    // The shared default is untouched.
    expect(await (await call('GET', '/admin/templates/activation_sms')).json()).toMatchObject({ source: 'seed' });
  });

  test('when two enterprises each have a template of one name, then the admin API keeps them apart by enterpriseId, and a name twice for one owner is 409', async () => {
    const create = async (enterpriseId: string, text: string) =>
      call('POST', '/admin/templates', { name: 'promo_sms', channel: 'SMS', text, enterpriseId });
    expect((await create('ent-a', 'A promo')).status).toBe(201);
    expect((await create('ent-b', 'B promo')).status).toBe(201);
    const twice = await create('ent-a', 'A again');
    expect(twice.status).toBe(409);
    expect(await twice.json()).toMatchObject({ message: 'Template promo_sms already exists' });

    const read = async (query: string) => {
      const res = await call('GET', `/admin/templates/promo_sms${query}`);
      return res.status === 200 ? ((await res.json()) as { text: string; enterpriseId?: string; version: number }) : res.status;
    };
    expect(await read('?enterpriseId=ent-a')).toMatchObject({ text: 'A promo', enterpriseId: 'ent-a' });
    expect(await read('?enterpriseId=ent-b')).toMatchObject({ text: 'B promo', enterpriseId: 'ent-b' });
    // Without an owner, the name means the shared template: there is none.
    expect(await read('')).toBe(404);
    expect(await read('?enterpriseId=ent-c')).toBe(404);
    expect((await call('GET', '/admin/templates/promo_sms?enterpriseId=bad%20id')).status).toBe(422);

    const names = async (query: string) =>
      ((await (await call('GET', `/admin/templates${query}`)).json()) as { name: string; enterpriseId?: string }[]).map(
        (t) => `${t.enterpriseId ?? '*'}/${t.name}`,
      );
    expect(await names('?enterpriseId=ent-a')).toEqual(['ent-a/promo_sms']);
    expect(await names('')).toEqual(expect.arrayContaining(['ent-a/promo_sms', 'ent-b/promo_sms', '*/otp_sms']));

    const updated = await call('PUT', '/admin/templates/promo_sms?enterpriseId=ent-b', { channel: 'SMS', text: 'B promo 2' });
    expect(await updated.json()).toMatchObject({ text: 'B promo 2', enterpriseId: 'ent-b', version: 2 });
    expect(await read('?enterpriseId=ent-a')).toMatchObject({ text: 'A promo', version: 1 });
    expect((await call('PUT', '/admin/templates/promo_sms', { channel: 'SMS', text: 'shared' })).status).toBe(404);

    expect((await call('DELETE', '/admin/templates/promo_sms?enterpriseId=ent-a')).status).toBe(204);
    expect(await read('?enterpriseId=ent-a')).toBe(404);
    expect(await read('?enterpriseId=ent-b')).toMatchObject({ text: 'B promo 2' });
    expect((await call('DELETE', '/admin/templates/promo_sms?enterpriseId=ent-a')).status).toBe(404);
    // The name is free again for that owner at once.
    expect((await create('ent-a', 'A promo 2')).status).toBe(201);
  });
});
