// Runs outside Jest's transform, so it uses the compiled helpers (test.sh builds first).
import { writeFileSync } from 'node:fs';
import { startMongoServer, startRedisServer } from '../../dist/scripts/local-services.js';
import { startProviderMocks } from './provider-mocks.mjs';
import { servicesStateFile } from './services-state.mjs';

// One Redis and one MongoDB per test run; each test file uses its own database and queue
// prefix. A store given by whoever runs the suite (TEST_MONGODB_URI: any MongoDB, a replica set
// included; TEST_REDIS_URL) is used as it is, and only what is not given is started here. Test
// workers inherit these variables because they start after this runs.
export default async function globalSetup() {
  // Several Jest projects share this set-up; the servers are started once per run.
  if (process.env.TEST_SERVICES_READY) return;
  const [redis, mongo, mocks] = await Promise.all([
    process.env.TEST_REDIS_URL ? undefined : startRedisServer(),
    process.env.TEST_MONGODB_URI ? undefined : startMongoServer(),
    startProviderMocks(),
  ]);
  if (redis) process.env.TEST_REDIS_URL = redis.url;
  if (mongo) process.env.TEST_MONGODB_URI = mongo.url;
  process.env.TEST_TWILIO_MOCK_URL = mocks.twilio.url;
  process.env.TEST_SENDGRID_MOCK_URL = mocks.sendgrid.url;
  process.env.TEST_SERVICES_READY = '1';
  const pids = [redis?.pid, mongo?.pid, mocks.twilio.pid, mocks.sendgrid.pid].filter((pid) => pid !== undefined);
  writeFileSync(servicesStateFile, JSON.stringify({ pids }));
}
