import { createClientWithToken } from '../support/auth-helpers.js';
import { notificationBody } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { errorBody, sendJson } from '../support/users-helpers.js';

/*
 * Callback URLs reach only public addresses. The service runs as in production here (loopback not
 * allowed, no private network listed): every spelling of an internal address is refused when the
 * notification is created.
 */
describe('Notification callbacks: internal addresses refused at creation', () => {
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    service = await startTestService('notifcbaddr');
    token = (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'carol' });
  });
  afterAll(async () => {
    await service.close();
  });

  const create = (callbackUrl: string) =>
    sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody('carol', { callbackUrl }));

  test.each([
    // Loopback, in every spelling the URL parser accepts for 127.0.0.1 and ::1.
    ['http://127.0.0.1:8080/cb', '127.0.0.1', 'loopback'],
    ['https://127.0.0.1/cb', '127.0.0.1', 'loopback'],
    ['https://127.1/cb', '127.0.0.1', 'loopback'],
    ['https://2130706433/cb', '127.0.0.1', 'loopback'],
    ['https://0x7f.1/cb', '127.0.0.1', 'loopback'],
    ['https://0x7f000001/cb', '127.0.0.1', 'loopback'],
    ['https://0177.0.0.1/cb', '127.0.0.1', 'loopback'],
    ['https://127.0.0.1./cb', '127.0.0.1', 'loopback'],
    ['https://%31%32%37.0.0.1/cb', '127.0.0.1', 'loopback'],
    ['https://127.255.255.254/cb', '127.255.255.254', 'loopback'],
    ['https://[::1]/cb', '::1', 'loopback'],
    ['https://[0:0:0:0:0:0:0:1]/cb', '::1', 'loopback'],
    ['https://[::ffff:127.0.0.1]/cb', '127.0.0.1', 'loopback'],
    ['https://[::ffff:7f00:1]/cb', '127.0.0.1', 'loopback'],
    ['https://localhost/cb', 'localhost', 'loopback'],
    ['https://LOCALHOST./cb', 'localhost', 'loopback'],
    ['https://api.localhost/cb', 'api.localhost', 'loopback'],
    // Private (RFC 1918), shared (RFC 6598), link-local (cloud metadata), unique-local.
    ['https://10.0.0.1/cb', '10.0.0.1', 'private'],
    ['https://012.0.0.1/cb', '10.0.0.1', 'private'],
    ['https://172.16.5.4/cb', '172.16.5.4', 'private'],
    ['https://192.168.1.1/cb', '192.168.1.1', 'private'],
    ['https://3232235777/cb', '192.168.1.1', 'private'],
    ['https://[::ffff:10.0.0.1]/cb', '10.0.0.1', 'private'],
    ['https://100.64.0.1/cb', '100.64.0.1', 'shared'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254', 'link-local'],
    ['https://[::ffff:169.254.169.254]/latest/meta-data/', '169.254.169.254', 'link-local'],
    ['https://[fe80::1]/cb', 'fe80::1', 'link-local'],
    ['https://[fc00::1]/cb', 'fc00::1', 'unique-local'],
    ['https://[fd12:3456::1]/cb', 'fd12:3456::1', 'unique-local'],
    // Unspecified, multicast, broadcast and other non-public ranges.
    ['https://0.0.0.0/cb', '0.0.0.0', 'unspecified'],
    ['https://0/cb', '0.0.0.0', 'unspecified'],
    ['https://[::]/cb', '::', 'unspecified'],
    ['https://224.0.0.1/cb', '224.0.0.1', 'multicast'],
    ['https://[ff02::1]/cb', 'ff02::1', 'multicast'],
    ['https://255.255.255.255/cb', '255.255.255.255', 'broadcast'],
    ['https://[64:ff9b::7f00:1]/cb', '64:ff9b::7f00:1', 'rfc6052'],
    ['https://[2002:7f00:1::]/cb', '2002:7f00:1::', '6to4'],
  ])('when callbackUrl is %s, then 422 names %s as in the %s range', async (callbackUrl, address, range) => {
    const res = await create(callbackUrl);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(
      errorBody(
        422,
        'Unprocessable Entity',
        `Invalid field callbackUrl: must reach a public address (${address} is in the ${range} range)`,
        '/v1/notifications',
      ),
    );
  });

  test.each([
    ['http://example.com/cb', 'Invalid field callbackUrl: must be https (http only on loopback, where allowed)'],
    ['ftp://example.com/cb', 'Invalid field callbackUrl: must be https (http only on loopback, where allowed)'],
    ['https://user:pw@example.com/cb', 'Invalid field callbackUrl: must not carry credentials'],
    ['https://[::1/cb', 'Invalid field callbackUrl: must be an absolute URL'],
    ['https://256.0.0.1/cb', 'Invalid field callbackUrl: must be an absolute URL'],
  ])('when callbackUrl is %s, then 422: %s', async (callbackUrl, message) => {
    const res = await create(callbackUrl);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(errorBody(422, 'Unprocessable Entity', message, '/v1/notifications'));
  });

  test.each(['https://8.8.8.8/cb', 'https://[2001:4860:4860::8888]/cb', 'https://hooks.example.com:8443/cb?tenant=1'])(
    'when callbackUrl is the public %s, then it is accepted (host names are checked when sending)',
    async (callbackUrl) => {
      expect((await create(callbackUrl)).status).toBe(201);
    },
  );
});
