// Runs outside Jest's transform, so it uses the compiled helpers (test.sh builds first).
import { writeFileSync } from 'node:fs';
import { startMongoServer, startRedisServer } from '../../dist/scripts/local-services.js';
import { startProviderMocks } from './provider-mocks.mjs';
import { servicesStateFile } from './services-state.mjs';

// One Redis and one MongoDB-wire server per test run; each test file uses its own database and
// queue prefix. Test workers inherit these variables because they start after this runs.
export default async function globalSetup() {
  // Several Jest projects share this set-up; the servers are started once per run.
  if (process.env.TEST_REDIS_URL) return;
  const [redis, mongo, mocks] = await Promise.all([startRedisServer(), startMongoServer(), startProviderMocks()]);
  process.env.TEST_REDIS_URL = redis.url;
  process.env.TEST_MONGODB_URI = mongo.url;
  process.env.TEST_TWILIO_MOCK_URL = mocks.twilio.url;
  process.env.TEST_SENDGRID_MOCK_URL = mocks.sendgrid.url;
  writeFileSync(servicesStateFile, JSON.stringify({ pids: [redis.pid, mongo.pid, mocks.twilio.pid, mocks.sendgrid.pid] }));
}
