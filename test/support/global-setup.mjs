// Runs outside Jest's transform, so it uses the compiled helpers (test.sh builds first).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMongoServer, startRedisServer } from '../../dist/scripts/local-services.js';
import { startRedisCluster } from '../../dist/scripts/local-redis-cluster.js';
import { startProviderMocks } from './provider-mocks.mjs';
import { servicesStateFile } from './services-state.mjs';

/**
 * The run's Redis: one server, or with TEST_REDIS_CLUSTER=1 a 3-master Redis Cluster (the
 * cluster pass of scripts/test.sh). TEST_REDIS_CLUSTER_NODES or TEST_REDIS_URL given from outside
 * point the run at an existing cluster or server instead.
 */
async function startRedis() {
  if (process.env.TEST_REDIS_CLUSTER_NODES) return { env: {}, pids: [], dirs: [] };
  if (process.env.TEST_REDIS_CLUSTER === '1') {
    const cluster = await startRedisCluster();
    return { env: { TEST_REDIS_CLUSTER_NODES: cluster.seeds }, pids: cluster.nodes.map((node) => node.pid), dirs: [cluster.dir] };
  }
  if (process.env.TEST_REDIS_URL) return { env: {}, pids: [], dirs: [] };
  const redis = await startRedisServer();
  return { env: { TEST_REDIS_URL: redis.url }, pids: [redis.pid], dirs: [] };
}

/**
 * The MongoDB-wire server's warnings and errors (a reply it could not encode closes a connection,
 * which a test sees as 503 'database is not reachable'). scripts/test.sh prints its end when a run
 * fails; each run starts it afresh (the previous one becomes `.1`).
 */
const mongoServerLog = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.local', 'mongo-server-test.log');

// One Redis and one MongoDB per test run; each test file uses its own database and queue
// prefix. A store given by whoever runs the suite (TEST_MONGODB_URI: any MongoDB, a replica set
// included; TEST_REDIS_URL or TEST_REDIS_CLUSTER_NODES) is used as it is, and only what is not
// given is started here. Test workers inherit these variables because they start after this runs.
export default async function globalSetup() {
  // Several Jest projects share this set-up; the servers are started once per run.
  if (process.env.SVC_TEST_SERVICES) return;
  const [redis, mongo, mocks] = await Promise.all([
    startRedis(),
    process.env.TEST_MONGODB_URI ? undefined : startMongoServer({ log: { file: mongoServerLog } }),
    startProviderMocks(),
  ]);
  Object.assign(process.env, redis.env);
  if (mongo) process.env.TEST_MONGODB_URI = mongo.url;
  process.env.TEST_TWILIO_MOCK_URL = mocks.twilio.url;
  process.env.TEST_SENDGRID_MOCK_URL = mocks.sendgrid.url;
  process.env.SVC_TEST_SERVICES = 'started';
  const pids = [...redis.pids, mongo?.pid, mocks.twilio.pid, mocks.sendgrid.pid].filter((pid) => pid !== undefined);
  writeFileSync(servicesStateFile, JSON.stringify({ pids, dirs: redis.dirs }));
}
