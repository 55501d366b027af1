import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../core/platform/project-root.js';
import { findFreePort } from '../../scripts/local-services.js';
import { testEnv } from '../support/test-service.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

/** The fenced bash block right after the README's `## Quickstart` heading. */
function quickstartBlock(): string {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const section = readme.split(/^## Quickstart$/m)[1];
  if (section === undefined) throw new Error('README.md has no "## Quickstart" heading');
  const block = /^```bash\n([\s\S]*?)^```$/m.exec(section.split(/^## /m)[0] ?? '');
  if (!block?.[1]) throw new Error('no ```bash block under "## Quickstart" in README.md');
  return block[1];
}

function runBash(script: string, env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      { env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env }, cwd, timeout: 90000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('README quickstart', () => {
  const processes: WorkerProcess[] = [];
  let base: string;
  let adminToken: string;
  let scratch: string;

  // The service as `npm start` runs it: the API and both workers, messages in the outbox.
  beforeAll(async () => {
    const port = await findFreePort();
    base = `http://127.0.0.1:${port}`;
    const env = testEnv('quickstart', { PORT: String(port), PUBLIC_URL: base });
    adminToken = env.ADMIN_TOKEN ?? '';
    const api = spawnProcessEntry('api/main.js', env);
    const dispatch = spawnProcessEntry('workers/dispatch/main.js', env);
    const enrollment = spawnProcessEntry('workers/enrollment/main.js', env);
    processes.push(api, dispatch, enrollment);
    await Promise.all([
      waitForOutput(api, 'API listening', 60000),
      waitForOutput(dispatch, 'dispatch worker running', 60000),
      waitForOutput(enrollment, 'enrollment worker running', 60000),
    ]);
    scratch = mkdtempSync(join(tmpdir(), 'svc-quickstart-'));
  }, 90000);

  afterAll(async () => {
    for (const proc of processes) if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
    await Promise.all(processes.map((proc) => proc.exited));
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test('when the quickstart block runs with bash against the service, then every step succeeds and the OTP validates', async () => {
    const script = quickstartBlock();
    expect(script).toMatch(/^set -euo pipefail$/m);

    const { code, stdout, stderr } = await runBash(script, { BASE: base, ADMIN_TOKEN: adminToken }, scratch);
    if (code !== 0) throw new Error(`quickstart exited ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`);

    expect(stdout).toMatch(/^enrolled: alice-\d+$/m);
    const otpUuid = /^otpUuid: ([0-9a-f-]{36})$/m.exec(stdout)?.[1];
    expect(otpUuid).toBeDefined();
    expect(stdout).toMatch(/^code from the outbox: \d{6}$/m);
    const lines = stdout.split('\n').filter((line) => line.startsWith('{'));
    const validated = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((body) => body.status === 'SUCCESS');
    expect(validated).toEqual({ otpUuid, status: 'SUCCESS' });
    const status = JSON.parse(lines[lines.length - 1] ?? '{}') as {
      otpUuid: string;
      status: string;
      deliveries: { channel: string; state: string }[];
    };
    expect(status).toMatchObject({ otpUuid, status: 'USED', attemptsLeft: 2 });
    expect(status.deliveries).toEqual([expect.objectContaining({ channel: 'SMS', state: 'SENT' })]);
  }, 120000);

  test('when a step fails, then the quickstart stops with a non-zero exit (set -e)', async () => {
    const { code, stdout } = await runBash(quickstartBlock(), { BASE: base, ADMIN_TOKEN: 'wrong-admin-token-0123456789' }, scratch);
    expect(code).not.toBe(0);
    expect(stdout).not.toContain('client:');
  }, 60000);
});
