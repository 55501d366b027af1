// Runs outside Jest's transform, so it uses the compiled helpers (test.sh builds first).
import { writeFileSync } from 'node:fs';
import { startMongoServer, startRedisServer } from '../../dist/scripts/local-services.js';
import { servicesStateFile } from './services-state.mjs';

// One Redis and one MongoDB-wire server per test run; each test file uses its own database and
// queue prefix. Test workers inherit these variables because they start after this runs.
export default async function globalSetup() {
  const [redis, mongo] = await Promise.all([startRedisServer(), startMongoServer()]);
  process.env.TEST_REDIS_URL = redis.url;
  process.env.TEST_MONGODB_URI = mongo.url;
  writeFileSync(servicesStateFile, JSON.stringify({ pids: [redis.pid, mongo.pid] }));
}
