import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../core/platform/project-root.js';

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs a compiled Procfile entry (e.g. `workers/dispatch/main.js`) as its own process. */
export function spawnProcessEntry(entry: string, env: Record<string, string>, args: string[] = []): WorkerProcess {
  let output = '';
  const child = spawn(process.execPath, [join(projectRoot, 'dist', entry), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/** Waits until the process logs a line containing `text`. */
export async function waitForOutput(worker: WorkerProcess, text: string, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!worker.output().includes(text)) {
    if (Date.now() > deadline || worker.child.exitCode !== null) throw new Error(`process did not print "${text}":\n${worker.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
