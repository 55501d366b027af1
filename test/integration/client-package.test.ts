import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../core/platform/project-root.js';

const run = promisify(execFile);
const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

/**
 * The client library as an app gets it: packed from a fresh checkout (no dist/ yet, so `prepack`
 * must build it), installed from the tarball into an unrelated project, imported and used there,
 * and its type declarations checked by tsc.
 */
describe('the client library as a package', () => {
  let workDir: string;
  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), 'svc-client-pack-'));
  });
  afterAll(() => {
    rmSync(workDir, { recursive: true, force: true });
  });

  test('when a fresh checkout is packed and the tarball installed, then it holds compiled code and types, imports, and works', async () => {
    // A checkout as git gives it: the sources, no dist/. The repository's node_modules (after
    // `npm ci`) sits above it, as in a clone.
    const checkout = join(workDir, 'checkout');
    mkdirSync(checkout);
    symlinkSync(join(projectRoot, 'node_modules'), join(checkout, 'node_modules'), 'dir');
    const sdk = join(checkout, 'sdk');
    const source = join(projectRoot, 'sdk');
    cpSync(source, sdk, { recursive: true, filter: (path) => !/^[\\/](dist|node_modules)([\\/]|$)/.test(path.slice(source.length)) });
    expect(readdirSync(sdk)).not.toContain('dist');

    await run('npm', ['pack', '--pack-destination', workDir, ...NPM_QUIET], { cwd: sdk, timeout: 120_000 });
    const tarball = readdirSync(workDir).find((name) => name.endsWith('.tgz'));
    expect(tarball).toMatch(/^svc-identity-client-\d+\.\d+\.\d+\.tgz$/);
    const { stdout: contents } = await run('tar', ['-tzf', join(workDir, tarball!)]);
    const files = contents.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/CHANGELOG.md',
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/errors.d.ts',
        'package/src/index.ts',
      ]),
    );
    expect(files.filter((f) => /test|tsbuildinfo/.test(f))).toEqual([]);
    // Building is the packer's work (prepack): an app installing the package runs nothing, and no
    // script of the packed manifest names a file the package does not ship.
    const { stdout: manifest } = await run('tar', ['-xzOf', join(workDir, tarball!), 'package/package.json']);
    const scripts = (JSON.parse(manifest) as { scripts?: Record<string, string> }).scripts ?? {};
    expect(Object.keys(scripts).filter((name) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(name))).toEqual([]);
    const named = Object.values(scripts).flatMap((script) =>
      [...script.matchAll(/\bnode\s+([\w./-]+\.m?js)\b/g)].map((m) => `package/${m[1]}`),
    );
    expect(named.filter((file) => !files.includes(file))).toEqual([]);

    const app = join(workDir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'throwaway-app', private: true, type: 'module' }));
    // At the warning level: npm warns of a dependency's install scripts (`install-scripts`).
    const installed = await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn', join(workDir, tarball!)],
      {
        cwd: app,
        timeout: 120_000,
      },
    );
    expect(`${installed.stdout}${installed.stderr}`).not.toMatch(/install-scripts|prepare/);

    const script = `
      import { createPublicKey, verify } from 'node:crypto';
      import * as lib from '@svc-identity/client';
      const keys = await lib.createDeviceKey();
      const registration = await lib.deviceRegistration(keys, 'device-1');
      const signature = await lib.signAnswer(keys.privateKey, 'n-1', 'accept');
      const verified = verify('sha256', Buffer.from('n-1.accept'), { key: createPublicKey({ key: registration.publicKeyJwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
      const client = new lib.NotificationClient({ serviceUrl: 'http://127.0.0.1:9', getAccessToken: () => 't', timeoutMs: 5000 });
      const refused = await client.getNotifications(0, '', 1, new Date('nope'), '').catch((e) => e);
      const unreachable = await client.getNotifications(0, '', 1, new Date(), '').catch((e) => e);
      console.log(JSON.stringify({
        exports: Object.keys(lib).sort(),
        verified,
        refused: [refused instanceof lib.SvcIdentityError, refused instanceof lib.ClientLibraryError, refused.kind, refused.code],
        unreachable: [unreachable.name, unreachable.kind, unreachable.code],
      }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({
      exports: expect.arrayContaining([
        'ClientLibraryError',
        'IndexedDbDeviceKeyStore',
        'MemoryDeviceKeyStore',
        'NotificationClient',
        'ResultCode',
        'SignIn',
        'SvcIdentityError',
        'createDeviceKey',
      ]),
      verified: true,
      refused: [true, true, 'refused', 4],
      unreachable: ['SvcIdentityError', 'network', 39],
    });

    // The declarations serve a TypeScript app: a wrong argument type must fail to compile.
    writeFileSync(
      join(app, 'use.ts'),
      `import { NotificationClient, SvcIdentityError, type ErrorKind } from '@svc-identity/client';
       const client = new NotificationClient({ serviceUrl: 'https://id.example.com', getAccessToken: () => 't' });
       export const kinds: ErrorKind[] = ['sign-in-again', 'refused', 'network'];
       export const calls = [client.getNotifications(0, '', 1, new Date(), '2026-11-22T09:30:00Z'), SvcIdentityError];
       // @ts-expect-error recordCount is a number
       client.getNotifications('10', '', 1, '', '');`,
    );
    const tsc = join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
    await run(process.execPath, [tsc, ...flags, '--lib', 'es2022,dom', 'use.ts'], { cwd: app });
  }, 240_000);
});
