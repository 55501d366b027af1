// The MongoDB the operator's tools (admin CLI, migrate, reseal) work on: MONGODB_URI when the
// environment gives one, else the database of the local server `npm start` recorded.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSettings } from '../core/platform/config/settings-reader.js';
import { projectRoot } from '../core/platform/project-root.js';

/** Why no MongoDB could be named: printed by the tool as it stops. */
export class MongoUriError extends Error {}

/** MONGODB_URI, checked as the service checks it, or `<root>/.local/mongo.json`'s server. */
export function mongoUriOrLocal(env: NodeJS.ProcessEnv, root: string = projectRoot): string {
  // The settings table declares MONGODB_URI required (every service process needs it), so it is
  // read only when given: its absence is what sends a tool to the local server.
  if (env.MONGODB_URI !== undefined && env.MONGODB_URI !== '') {
    const { values, problems } = readSettings(env, ['MONGODB_URI']);
    if (problems.length > 0) throw new MongoUriError(problems.join('; '));
    return values.MONGODB_URI;
  }
  const record = join(root, '.local', 'mongo.json');
  if (!existsSync(record)) throw new MongoUriError('MONGODB_URI is not set and no local MongoDB was started by `npm start`');
  return `${(JSON.parse(readFileSync(record, 'utf8')) as { url: string }).url}/svc-identity`;
}
