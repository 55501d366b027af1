import { existsSync, readFileSync, rmSync } from 'node:fs';
import { servicesStateFile } from './services-state.mjs';

export default async function globalTeardown() {
  if (!existsSync(servicesStateFile)) return;
  const { pids, dirs = [] } = JSON.parse(readFileSync(servicesStateFile, 'utf8'));
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  // Files of servers that were started without a directory of their own (the cluster's nodes.conf).
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  rmSync(servicesStateFile, { force: true });
}
