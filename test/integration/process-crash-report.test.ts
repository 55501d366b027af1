import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../../core/platform/project-root.js';

const built = (file: string) => pathToFileURL(join(projectRoot, 'dist', file)).href;

/** A real Node process set up as every Procfile entry is, which then leaves a rejection unhandled. */
function crashingProcess(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `
    const { createLogger } = await import(${JSON.stringify(built('core/platform/logger/logger.js'))});
    const { reportCrashes } = await import(${JSON.stringify(built('core/platform/lifecycle/crash-report.js'))});
    const logger = createLogger({ level: 'info', name: 'api' });
    reportCrashes('api', logger);
    logger.info('started');
    Promise.reject(new Error('E11000 duplicate key error dup key: { emailId: "alice.martin@example.com", mobileNumber: "+15550001234" }'));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('a process that meets an error nothing handled', () => {
  test('when a rejection is left unhandled, then the process writes one fatal JSON line with the contacts masked, nothing on stderr, and exits 1', async () => {
    const { code, stdout, stderr } = await crashingProcess();
    expect(code).toBe(1);
    expect(stderr).toBe('');
    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const fatal = lines.filter((line) => line.level === 60);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ name: 'api', msg: 'api stopped on an error nothing handled (unhandledRejection)' });
    expect(stdout).toContain('a***@example.com');
    expect(stdout).not.toContain('alice.martin@example.com');
    expect(stdout).not.toContain('15550001234');
    expect(lines.some((line) => line.msg === 'started')).toBe(true);
  });
});
