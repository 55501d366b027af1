// `npm run services:stop`: stops the local Redis and MongoDB-wire servers that `npm start` left running.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../core/platform/project-root.js';

for (const name of ['redis', 'mongo']) {
  const file = join(projectRoot, '.local', `${name}.json`);
  if (!existsSync(file)) continue;
  const { pid } = JSON.parse(readFileSync(file, 'utf8')) as { pid: number };
  try {
    process.kill(pid, 'SIGTERM');
    console.log(`stopped local ${name} (pid ${pid})`);
  } catch {
    console.log(`local ${name} was not running`);
  }
  rmSync(file, { force: true });
}
