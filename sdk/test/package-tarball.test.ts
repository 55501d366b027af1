import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../core/project-root.js';

const run = promisify(execFile);

describe('the client library as a published package', () => {
  let workDir: string;
  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), 'svc-client-pack-'));
  });
  afterAll(() => {
    rmSync(workDir, { recursive: true, force: true });
  });

  test('when the package is packed and installed into a separate project, then it imports with its types and its operations', async () => {
    await run('npm', ['pack', '--pack-destination', workDir, '--loglevel=error'], { cwd: join(projectRoot, 'sdk') });
    const tarball = readdirSync(workDir).find((name) => name.endsWith('.tgz'));
    expect(tarball).toMatch(/^svc-identity-client-\d+\.\d+\.\d+\.tgz$/);

    const app = join(workDir, 'app');
    await run('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'throwaway-app', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', join(workDir, tarball!)], { cwd: app, timeout: 120_000 });
    const { stdout: listing } = await run('ls', [join(app, 'node_modules', '@svc-identity', 'client', 'dist')]);
    expect(listing.split('\n')).toEqual(expect.arrayContaining(['index.js', 'index.d.ts']));

    const script = `
      import * as lib from '@svc-identity/client';
      const keys = await lib.createDeviceKey();
      const registration = await lib.deviceRegistration(keys, 'device-1');
      const client = new lib.NotificationClient({ serviceUrl: 'http://127.0.0.1:9', getAccessToken: () => 't' });
      const refused = await client.getNotifications(-1, '', 1, '', '').catch((e) => e.code);
      console.log(JSON.stringify({ exports: Object.keys(lib).sort(), kty: registration.publicKeyJwk.kty, refused }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({
      exports: expect.arrayContaining([
        'ClientLibraryError',
        'NotificationClient',
        'ResultCode',
        'SignIn',
        'createDeviceKey',
        'IndexedDbDeviceKeyStore',
        'MemoryDeviceKeyStore',
      ]),
      kty: 'EC',
      refused: 4,
    });
  }, 180_000);
});
