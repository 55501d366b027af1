import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../core/platform/project-root.js';

const run = promisify(execFile);

describe('project toolchain', () => {
  test('when the suite runs, then it runs on Node 24 LTS, the runtime the project commands install', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });

  test('when scripts/use-node.sh is sourced, then node on PATH is Node 24', async () => {
    const { stdout } = await run('bash', ['-c', 'source scripts/use-node.sh && node --version'], { cwd: projectRoot });
    expect(stdout.trim()).toMatch(/^v24\.\d+\.\d+$/);
  });

  test('when the admin CLI is asked for --help, then it prints every command on stdout and exits 0', async () => {
    const { stdout, stderr } = await run(process.execPath, [join(projectRoot, 'dist', 'scripts', 'admin-cli.js'), '--help']);
    expect(stderr).toBe('');
    for (const command of [
      'clients create',
      'clients list',
      'clients show',
      'clients patch',
      'clients rotate-secret',
      'clients delete',
      'groups create',
      'groups list',
      'templates set',
      'users block',
      'outbox list',
    ]) {
      expect(stdout).toContain(command);
    }
  });

  test('when nothing changed since the last build, then build-if-stale does not compile', async () => {
    // First call compiles when the stamp is missing or older than a source; the second must skip.
    await run('bash', ['scripts/build-if-stale.sh'], { cwd: projectRoot, timeout: 120_000 });
    const { stderr } = await run('bash', ['scripts/build-if-stale.sh'], { cwd: projectRoot });
    expect(stderr).not.toContain('[build] compiling');
  }, 150_000);
});
