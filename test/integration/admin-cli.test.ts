import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../core/project-root.js';
import { requestToken } from '../support/auth-helpers.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { startTestService, uniqueName, type TestService } from '../support/test-service.js';

const run = promisify(execFile);
const CLI = join(projectRoot, 'dist', 'scripts', 'admin-cli.js');
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('admin CLI (run as a child process against MongoDB)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('admincli');
  });
  afterAll(async () => {
    await service.close();
  });

  async function cli(...args: string[]): Promise<unknown> {
    const { stdout } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, MONGODB_URI: service.config.mongodbUri } });
    return JSON.parse(stdout);
  }

  test('when a client is created from the CLI, then it prints the client with its secret, and the API issues it tokens', async () => {
    const created = (await cli(
      'clients',
      'create',
      '--name',
      'acme',
      '--scopes',
      'otp,users',
      '--enterprise',
      'acme-bank',
      '--allowed-ips',
      '127.0.0.1/32,::1/128',
    )) as Record<string, unknown>;
    expect(created).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      enterpriseId: 'acme-bank',
      name: 'acme',
      scopes: ['otp', 'users'],
      allowedIps: ['127.0.0.1/32', '::1/128'],
      redirectUris: [],
      webOrigins: [],
      public: false,
      firstParty: true,
      createdAt: expect.stringMatching(ISO),
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const res = await requestToken(service, { clientId: created.client_id as string, clientSecret: created.client_secret as string });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { scope: string }).scope).toBe('otp users');

    // The operator's change is in the activity record like one made through the admin API.
    const activity = await fetch(`${service.url}/admin/activity?enterpriseId=acme-bank`, {
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(((await activity.json()) as { activity: unknown[] }).activity).toEqual([
      {
        id: expect.any(String),
        at: expect.any(String),
        actor: { type: 'admin' },
        action: 'client.created',
        enterpriseId: 'acme-bank',
        clientId: created.client_id,
      },
    ]);

    const listed = (await cli('clients', 'list')) as Record<string, unknown>[];
    const { client_secret: _secret, ...withoutSecret } = created;
    expect(listed).toEqual([withoutSecret]);
  });

  test('when a public client is created and updated from the CLI, then its redirect URIs and web origins are checked and replaced', async () => {
    const created = (await cli(
      'clients',
      'create',
      '--name',
      'phone',
      '--scopes',
      '',
      '--public',
      '--redirect-uris',
      'com.example.phone:/cb',
      '--web-origins',
      'https://phone.example',
    )) as Record<string, unknown>;
    expect(created).toMatchObject({ public: true, redirectUris: ['com.example.phone:/cb'], webOrigins: ['https://phone.example'] });
    const updated = await cli(
      'clients',
      'update',
      created.client_id as string,
      '--web-origins',
      'https://web.phone.example,http://127.0.0.1:8080',
    );
    expect(updated).toMatchObject({
      redirectUris: ['com.example.phone:/cb'],
      webOrigins: ['https://web.phone.example', 'http://127.0.0.1:8080'],
    });
    await expect(
      run(process.execPath, [CLI, 'clients', 'update', created.client_id as string, '--web-origins', 'http://web.phone.example'], {
        env: { ...process.env, MONGODB_URI: service.config.mongodbUri },
      }),
    ).rejects.toMatchObject({
      code: 2,
      stderr: "Invalid field webOrigins: 'http://web.phone.example' uses http off loopback; pages of other origins must be https\n",
    });
  });

  test('when groups are created and listed from the CLI, then it prints them as JSON', async () => {
    expect(await cli('groups', 'create', 'retail')).toEqual({ name: 'retail', description: null, createdAt: expect.stringMatching(ISO) });
    expect(await cli('groups', 'create', 'corporate', '--description', 'Corporate banking')).toEqual({
      name: 'corporate',
      description: 'Corporate banking',
      createdAt: expect.stringMatching(ISO),
    });
    expect(await cli('groups', 'list')).toEqual([
      { name: 'corporate', description: 'Corporate banking', createdAt: expect.stringMatching(ISO) },
      { name: 'retail', description: null, createdAt: expect.stringMatching(ISO) },
    ]);
  });

  test('when a group already exists, then the CLI exits 2 with the conflict on stderr', async () => {
    await cli('groups', 'create', 'dupe');
    await expect(
      run(process.execPath, [CLI, 'groups', 'create', 'dupe'], { env: { ...process.env, MONGODB_URI: service.config.mongodbUri } }),
    ).rejects.toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'Group dupe already exists\n',
    });
  });

  test('when the command is unknown or a scope is wrong, then the CLI exits 2 with usage help', async () => {
    const env = { ...process.env, MONGODB_URI: testMongoUri(uniqueName('cliusage')) };
    await expect(run(process.execPath, [CLI, 'nope'], { env })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: npm run admin --'),
    });
    await expect(run(process.execPath, [CLI, 'clients', 'create', '--name', 'x', '--scopes', 'root'], { env })).rejects.toMatchObject({
      code: 2,
      stderr: 'unknown scope(s): root (known: otp, users, notifications)\n',
    });
  });
});
