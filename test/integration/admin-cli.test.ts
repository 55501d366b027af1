import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeProtectedHeader } from 'jose';
import { readCallbackSecret } from '../../core/clients/callback-secret.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { createOutboxRepository } from '../../core/providers/outbox.repository.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { insertUser } from '../support/user-fixtures.js';
import { requestToken } from '../support/auth-helpers.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { startTestService, uniqueName, type TestService } from '../support/test-service.js';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { eventually } from '../support/waiting.js';

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

  // The service's own key, as an operator's shell has it: the CLI seals callback secrets with it.
  const env = () => ({ ...process.env, MONGODB_URI: service.config.mongodbUri, OTP_ENCRYPTION_KEY: service.config.otpEncryptionKey ?? '' });
  async function cli(...args: string[]): Promise<unknown> {
    const { stdout } = await run(process.execPath, [CLI, ...args], { env: env() });
    return JSON.parse(stdout);
  }
  /** The refusal of a command: exit code, nothing on stdout, the message on stderr. */
  async function refused(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      await run(process.execPath, [CLI, ...args], { env: env() });
    } catch (err) {
      const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
      return { code, stdout, stderr };
    }
    throw new Error(`admin ${args.join(' ')} succeeded`);
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
      test: false,
      testCodes: [],
      hasCallbackSecret: true,
      createdAt: expect.stringMatching(ISO),
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      callback_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // The callback secret shown is the one callbacks are signed with.
    expect(
      await readCallbackSecret(
        service.services.repositories.clients,
        created.client_id as string,
        otpKeysFromConfig(service.config).encryptionKey,
      ),
    ).toBe(created.callback_secret);
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
    const { client_secret: _secret, callback_secret: _callbackSecret, ...withoutSecret } = created;
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
        env: env(),
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
    for (const args of [['nope'], ['clients', 'rotate'], ['groups']]) {
      await expect(run(process.execPath, [CLI, ...args], { env })).rejects.toMatchObject({
        code: 2,
        stdout: '',
        stderr: expect.stringMatching(new RegExp(`^unknown command: ${args.join(' ')}\nusage: npm run admin --`)),
      });
    }
    await expect(run(process.execPath, [CLI, 'clients', 'create', '--name', 'x', '--scopes', 'root'], { env })).rejects.toMatchObject({
      code: 2,
      stderr: 'unknown scope(s): root (known: otp, users, notifications)\n',
    });
  });

  test('when a client is patched from the CLI, then name, scopes and allow-list change as through the API, with the same refusals', async () => {
    const created = (await cli('clients', 'create', '--name', 'before', '--scopes', 'otp', '--allowed-ips', '127.0.0.1')) as Record<
      string,
      string
    >;
    const patched = await cli(
      'clients',
      'patch',
      created.client_id,
      '--name',
      'after',
      '--scopes',
      'otp,notifications',
      '--allowed-ips',
      '10.0.0.1,fd00::/8',
      '--comments',
      'CHG-7',
    );
    expect(patched).toMatchObject({ name: 'after', scopes: ['otp', 'notifications'], allowedIps: ['10.0.0.1/32', 'fd00::/8'] });
    expect(await cli('clients', 'show', created.client_id)).toEqual(patched);
    const token = await requestToken(service, { clientId: created.client_id, clientSecret: created.client_secret });
    expect(((await token.json()) as { scope: string }).scope).toBe('otp notifications');
    expect(await refused('clients', 'patch', created.client_id, '--name', '')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Invalid field name: must NOT have fewer than 1 characters\n',
    });
    expect(await refused('clients', 'patch', created.client_id)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^give at least one of/),
    });
  });

  test('when test mode is set from the CLI, then --test creates a test client, --no-test clears it, both at once are refused', async () => {
    const created = (await cli('clients', 'create', '--name', 'tests', '--scopes', 'otp', '--test')) as Record<string, unknown>;
    expect(created.test).toBe(true);
    const id = created.client_id as string;
    expect(await cli('clients', 'patch', id, '--no-test', '--comments', 'go live')).toMatchObject({ test: false });
    expect(await cli('clients', 'show', id)).toMatchObject({ test: false });
    expect(await cli('clients', 'patch', id, '--test', '--test-codes', 'alice:123456,bob:65:43')).toMatchObject({
      test: true,
      testCodes: [
        { userId: 'alice', code: '123456' },
        { userId: 'bob', code: '65:43' },
      ],
    });
    expect(await refused('clients', 'patch', id, '--test-codes', 'alice')).toMatchObject({
      code: 2,
      stderr: "--test-codes: 'alice' is not userId:code\n",
    });
    expect(await refused('clients', 'patch', id, '--test', '--no-test')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'give --test or --no-test, not both\n',
    });
    const { entries } = await createActivityRepository(service.ctx.mongo).list({ limit: 100 });
    expect(entries.filter((e) => e.clientId === id).map((e) => [e.action, e.comments])).toEqual([
      ['client.updated', 'test=true'],
      ['client.updated', 'test=false; go live'],
      ['client.created', 'test=true'],
    ]);
  });

  test('when secrets are rotated from the CLI, then both client secrets work during the grace period and the callback secret is replaced', async () => {
    const created = (await cli('clients', 'create', '--name', 'rotator', '--scopes', 'otp')) as Record<string, string>;
    const rotated = (await cli('clients', 'rotate-secret', created.client_id, '--comments', 'yearly')) as Record<string, string>;
    expect(rotated).toEqual({
      client_id: created.client_id,
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      previousSecretExpiresAt: expect.stringMatching(ISO),
    });
    for (const clientSecret of [created.client_secret, rotated.client_secret])
      expect((await requestToken(service, { clientId: created.client_id, clientSecret })).status).toBe(200);

    const callback = (await cli('clients', 'rotate-callback-secret', created.client_id)) as Record<string, string>;
    expect(callback.callback_secret).not.toBe(created.callback_secret);
    expect(
      await readCallbackSecret(service.services.repositories.clients, created.client_id, otpKeysFromConfig(service.config).encryptionKey),
    ).toBe(callback.callback_secret);
    const activity = await fetch(`${service.url}/admin/activity?limit=100`, {
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    const actions = ((await activity.json()) as { activity: { action: string; clientId?: string }[] }).activity
      .filter((entry) => entry.clientId === created.client_id)
      .map((entry) => entry.action);
    expect(actions.sort()).toEqual(['client.callback-secret-rotated', 'client.created', 'client.secret-rotated']);
  });

  test("when the CLI's OTP_ENCRYPTION_KEY is not the service's, then it seals nothing with it: creating a confidential client and rotating a callback secret exit 1 naming the setting", async () => {
    // An operator's shell left with the key dropped by a rotation (or, locally, .local/secrets.json
    // still holding it): a callback secret sealed with it would open in no process, and every
    // callback of that client would fail to be signed.
    const created = (await cli('clients', 'create', '--name', 'sealed-once', '--scopes', 'otp')) as Record<string, string>;
    const otherKey = { ...env(), OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'), OTP_ENCRYPTION_KEYS_PREVIOUS: '' };
    const refusal = async (...args: string[]) => {
      try {
        await run(process.execPath, [CLI, ...args], { env: otherKey });
      } catch (err) {
        const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
        return { code, stdout, stderr };
      }
      throw new Error(`admin ${args.join(' ')} succeeded`);
    };
    for (const args of [
      ['clients', 'rotate-callback-secret', created.client_id],
      ['clients', 'create', '--name', 'sealed-with-another-key', '--scopes', 'otp'],
    ]) {
      const { code, stdout, stderr } = await refusal(...args);
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(stderr).toContain('does not open with this OTP_ENCRYPTION_KEY');
    }
    expect(
      await readCallbackSecret(service.services.repositories.clients, created.client_id, otpKeysFromConfig(service.config).encryptionKey),
    ).toBe(created.callback_secret);
    const names = ((await cli('clients', 'list')) as { name: string }[]).map((client) => client.name);
    expect(names).toContain('sealed-once');
    expect(names).not.toContain('sealed-with-another-key');
    // A public client has no callback secret: it is created whatever the key.
    const publicClient = await run(
      process.execPath,
      [
        CLI,
        'clients',
        'create',
        '--name',
        'public-any-key',
        '--scopes',
        'notifications',
        '--public',
        '--redirect-uris',
        'https://app.example/cb',
      ],
      { env: otherKey },
    );
    expect(JSON.parse(publicClient.stdout)).toMatchObject({ name: 'public-any-key', public: true });
  });

  test('when the signing keys are rotated from the CLI with --retire-at-once, then it prints the new keys and the API, told through Redis, signs with them at once', async () => {
    // Its own deployment: the shared service's keys stay as the other tests expect them. Its
    // periodic reads are an hour apart: only the CLI's notice makes it read the new keys.
    const own = await startTestService('admincli-keys', { SIGNING_KEY_RELOAD_SECONDS: '3600' });
    try {
      const redisOf = (from: Record<string, string>) =>
        Object.fromEntries(['REDIS_URL', 'REDIS_CLUSTER_NODES', 'QUEUE_PREFIX'].flatMap((key) => (key in from ? [[key, from[key]]] : [])));
      const ownEnv: NodeJS.ProcessEnv = {
        ...process.env,
        MONGODB_URI: own.config.mongodbUri,
        OTP_ENCRYPTION_KEY: own.config.otpEncryptionKey ?? '',
        SIGNING_KEY_RELOAD_SECONDS: '3600',
        ...redisOf(own.env),
      };
      const created = JSON.parse(
        (await run(process.execPath, [CLI, 'clients', 'create', '--name', 'keys', '--scopes', 'otp'], { env: ownEnv })).stdout,
      ) as {
        client_id: string;
        client_secret: string;
      };
      const app = { clientId: created.client_id, clientSecret: created.client_secret };
      const kidOfNextToken = async () => {
        const body = (await (await requestToken(own, app)).json()) as { access_token: string };
        return decodeProtectedHeader(body.access_token).kid;
      };
      const before = await kidOfNextToken();
      const { stdout } = await run(process.execPath, [CLI, 'signing-keys', 'rotate', '--retire-at-once', '--comments', 'leaked'], {
        env: ownEnv,
      });
      const rotation = JSON.parse(stdout) as {
        rotated: { alg: string; kid: string; previousKid: string; activeFrom: string; previousKeyRemovedAt: string }[];
      };
      expect(rotation).toEqual({
        rotated: [
          {
            alg: 'ES256',
            kid: expect.any(String),
            previousKid: before,
            activeFrom: expect.stringMatching(ISO),
            previousKeyRemovedAt: expect.stringMatching(ISO),
          },
          {
            alg: 'RS256',
            kid: expect.any(String),
            previousKid: expect.any(String),
            activeFrom: expect.stringMatching(ISO),
            previousKeyRemovedAt: expect.stringMatching(ISO),
          },
        ],
        idTokenKeyConfigured: false,
      });
      await eventually(async () => (await kidOfNextToken()) === rotation.rotated[0]?.kid || undefined, 3000);
      const entries = await createActivityRepository(own.ctx.mongo).list({ limit: 1 });
      expect(entries.entries[0]).toMatchObject({ action: 'signing-keys.rotated', comments: 'leaked' });

      // Without a Redis to tell, the rotation is stored and the CLI says when the API follows.
      const { REDIS_CLUSTER_NODES: _cluster, ...withoutRedis } = ownEnv;
      const untold = await run(process.execPath, [CLI, 'signing-keys', 'rotate'], {
        env: { ...withoutRedis, REDIS_URL: 'redis://127.0.0.1:9' },
      });
      expect(JSON.parse(untold.stdout)).toMatchObject({ rotated: [{ previousKid: rotation.rotated[0]?.kid }, expect.anything()] });
      expect(untold.stderr).toBe(
        'The API processes were not told (Redis is not reachable): they read the new keys within SIGNING_KEY_RELOAD_SECONDS (3600 s)\n',
      );
    } finally {
      await own.close();
    }
  });

  test("when something does not exist, then the CLI says so in the admin API's words and exits 2", async () => {
    const cases: [string[], string][] = [
      [['clients', 'show', 'nope'], 'Client not found'],
      [['clients', 'patch', 'nope', '--name', 'x'], 'Client not found'],
      [['clients', 'rotate-secret', 'nope'], 'Client not found'],
      [['clients', 'delete', 'nope'], 'Client not found'],
      [['groups', 'show', 'nope'], 'Group not found'],
      [['groups', 'delete', 'nope'], 'Group not found'],
      [['templates', 'show', 'nope'], 'Template not found'],
      [['templates', 'delete', 'nope'], 'Template not found'],
      [['users', 'block', 'nobody'], 'User not found'],
      [['users', 'unlock-sign-in', 'nobody'], 'User not found'],
    ];
    // Ten CLI processes, each starting Node and connecting to MongoDB: side by side, with room for a busy machine.
    const answers = await Promise.all(cases.map(async ([args]) => [args.join(' '), await refused(...args)]));
    expect(answers).toEqual(cases.map(([args, message]) => [args.join(' '), { code: 2, stdout: '', stderr: `${message}\n` }]));
  }, 120_000);

  test('when groups are shown and deleted from the CLI, then it prints them and a deleted group is gone', async () => {
    await cli('groups', 'create', 'short-lived', '--description', 'Temp');
    expect(await cli('groups', 'show', 'short-lived')).toEqual({
      name: 'short-lived',
      description: 'Temp',
      createdAt: expect.stringMatching(ISO),
    });
    expect(await cli('groups', 'delete', 'short-lived')).toEqual({ deleted: 'short-lived' });
    expect(await refused('groups', 'show', 'short-lived')).toMatchObject({ code: 2, stderr: 'Group not found\n' });
    const recorded = await service.ctx.mongo.collection('activity').find({ groupName: 'short-lived' }).sort({ at: 1 }).toArray();
    expect(recorded.map((e) => [e.action, e.actor])).toEqual([
      ['group.created', { type: 'admin' }],
      ['group.deleted', { type: 'admin' }],
    ]);
  });

  test('when a template is set from a file, then it is created, replaced with the next version, shown, listed and deleted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'admin-cli-'));
    const file = join(dir, 'template.json');
    await writeFile(file, JSON.stringify({ channel: 'SMS', text: 'Your code: __OTP__' }));
    expect(await cli('templates', 'set', 'promo_sms', '--file', file)).toMatchObject({ name: 'promo_sms', version: 1, source: 'admin' });
    await writeFile(file, JSON.stringify({ channel: 'SMS', text: 'Code __OTP__' }));
    expect(await cli('templates', 'set', 'promo_sms', '--file', file, '--comments', 'shorter')).toMatchObject({
      version: 2,
      text: 'Code __OTP__',
    });
    expect(await cli('templates', 'show', 'promo_sms')).toMatchObject({ name: 'promo_sms', version: 2 });
    expect(((await cli('templates', 'list')) as { name: string }[]).map((t) => t.name)).toContain('promo_sms');
    await writeFile(file, JSON.stringify({ channel: 'FAX', text: 'x' }));
    expect(await refused('templates', 'set', 'promo_sms', '--file', file)).toMatchObject({
      code: 2,
      stderr: 'Invalid field channel: must be equal to one of the allowed values\n',
    });
    expect(await cli('templates', 'delete', 'promo_sms')).toEqual({ deleted: 'promo_sms' });
    expect(await refused('templates', 'show', 'promo_sms')).toMatchObject({ code: 2, stderr: 'Template not found\n' });
  });

  /**
   * Deletes cli-acme's own group or template of this name and checks that only it went: the
   * enterprise's is not found any more, the shared one of the same name still shows `shared`
   * (then it is deleted too).
   */
  async function expectOwnDeletedBesideShared(
    kind: 'groups' | 'templates',
    name: string,
    { notFound, shared }: { notFound: string; shared: Record<string, string> },
  ): Promise<void> {
    expect(await cli(kind, 'delete', name, '--enterprise', 'cli-acme')).toEqual({ deleted: name, enterpriseId: 'cli-acme' });
    expect(await refused(kind, 'show', name, '--enterprise', 'cli-acme')).toMatchObject({ code: 2, stderr: `${notFound}\n` });
    expect(await cli(kind, 'show', name)).toMatchObject(shared);
    expect(await cli(kind, 'delete', name)).toEqual({ deleted: name });
  }

  test("when a group is created with --enterprise, then it is that enterprise's own: shown, listed and deleted beside the shared group of its name, which stays", async () => {
    expect(await cli('groups', 'create', 'cli-owned', '--description', 'Shared')).not.toHaveProperty('enterpriseId');
    expect(await cli('groups', 'create', 'cli-owned', '--description', 'Acme', '--enterprise', 'cli-acme')).toEqual({
      name: 'cli-owned',
      description: 'Acme',
      enterpriseId: 'cli-acme',
      createdAt: expect.stringMatching(ISO) as unknown,
    });
    expect(await cli('groups', 'show', 'cli-owned', '--enterprise', 'cli-acme')).toMatchObject({ description: 'Acme' });
    expect(await cli('groups', 'show', 'cli-owned')).toMatchObject({ description: 'Shared' });
    const own = (await cli('groups', 'list', '--enterprise', 'cli-acme')) as { name: string; enterpriseId?: string }[];
    expect(own.map((g) => [g.name, g.enterpriseId])).toEqual([['cli-owned', 'cli-acme']]);
    const every = (await cli('groups', 'list')) as { name: string; enterpriseId?: string }[];
    // Both owners of the name are listed once each. Their order is by id, which is not creation order: each CLI run is
    // its own process, and ObjectIds made in one second by two processes order by their random process part.
    const owners = every.filter((g) => g.name === 'cli-owned').map((g) => g.enterpriseId ?? '(shared)');
    expect(owners.sort()).toEqual(['(shared)', 'cli-acme']);
    expect(await refused('groups', 'create', 'cli-bad', '--enterprise', 'bad id!')).toMatchObject({ code: 2 });

    await expectOwnDeletedBesideShared('groups', 'cli-owned', { notFound: 'Group not found', shared: { description: 'Shared' } });
  });

  test("when a template is set with --enterprise, then it is that enterprise's own: shown, listed and deleted beside the shared template of its name, which stays", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'admin-cli-'));
    const file = join(dir, 'template.json');
    await writeFile(file, JSON.stringify({ channel: 'SMS', text: 'Shared: __OTP__' }));
    expect(await cli('templates', 'set', 'owned_sms', '--file', file)).not.toHaveProperty('enterpriseId');
    await writeFile(file, JSON.stringify({ channel: 'SMS', text: 'Acme: __OTP__' }));
    expect(await cli('templates', 'set', 'owned_sms', '--file', file, '--enterprise', 'cli-acme')).toMatchObject({
      name: 'owned_sms',
      enterpriseId: 'cli-acme',
      version: 1,
      text: 'Acme: __OTP__',
    });
    expect(await cli('templates', 'show', 'owned_sms', '--enterprise', 'cli-acme')).toMatchObject({ text: 'Acme: __OTP__' });
    expect(await cli('templates', 'show', 'owned_sms')).toMatchObject({ text: 'Shared: __OTP__', version: 1 });
    const own = (await cli('templates', 'list', '--enterprise', 'cli-acme')) as { name: string; enterpriseId?: string }[];
    expect(own.map((t) => [t.name, t.enterpriseId])).toEqual([['owned_sms', 'cli-acme']]);
    expect(await refused('templates', 'show', 'owned_sms', '--enterprise', 'bad id!')).toMatchObject({ code: 2 });

    await expectOwnDeletedBesideShared('templates', 'owned_sms', { notFound: 'Template not found', shared: { text: 'Shared: __OTP__' } });
  });

  test('when a user is blocked and unblocked from the CLI, then the user shows it and both are recorded with the reason', async () => {
    await insertUser(service.ctx.mongo, { userId: 'cli-user', enterpriseId: 'cli-bank' });
    expect(await cli('users', 'block', 'cli-user', '--enterprise', 'cli-bank', '--reason', 'lost phone')).toMatchObject({
      enterpriseId: 'cli-bank',
      userId: 'cli-user',
      blocked: true,
      blockedReason: 'lost phone',
    });
    const unblocked = await cli('users', 'unblock', 'cli-user', '--enterprise', 'cli-bank');
    expect(unblocked).toMatchObject({ userId: 'cli-user' });
    expect(unblocked).not.toHaveProperty('blocked');
    const activity = await fetch(`${service.url}/admin/activity?enterpriseId=cli-bank&userId=cli-user`, {
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    // Newest first to the second only: entries written by two processes within one second may come in either order.
    const entries = ((await activity.json()) as { activity: { action: string; comments?: string }[] }).activity;
    expect(entries.map((e) => [e.action, e.comments]).sort()).toEqual([
      ['user.blocked', 'lost phone'],
      ['user.unblocked', undefined],
    ]);
  });

  test('when the outbox is listed from the CLI, then it prints the newest messages first, filtered by address', async () => {
    await createOutboxRepository(service.ctx.mongo).insertOutboxMessage({ channel: 'SMS', to: '+15550001111', text: 'first' });
    await createOutboxRepository(service.ctx.mongo).insertOutboxMessage({ channel: 'SMS', to: '+15550001111', text: 'second' });
    await createOutboxRepository(service.ctx.mongo).insertOutboxMessage({ channel: 'SMS', to: '+15550002222', text: 'other' });
    const listed = (await cli('outbox', 'list', '--to', '+15550001111', '--limit', '5')) as { text: string }[];
    expect(listed.map((m) => m.text)).toEqual(['second', 'first']);
    expect(listed[0]).not.toHaveProperty('id');
    expect(await refused('outbox', 'list', '--limit', '0')).toMatchObject({ code: 2, stderr: '[Invalid field limit]\n' });
  });
});
