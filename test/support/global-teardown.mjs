import { existsSync, readFileSync, rmSync } from 'node:fs';
import { servicesStateFile } from './services-state.mjs';

export default async function globalTeardown() {
  if (!existsSync(servicesStateFile)) return;
  const { pids } = JSON.parse(readFileSync(servicesStateFile, 'utf8'));
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  rmSync(servicesStateFile, { force: true });
}
