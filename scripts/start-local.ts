// `npm start`: the API and every worker in one process, on local Redis and MongoDB-wire servers
// when REDIS_URL (or REDIS_CLUSTER_NODES) / MONGODB_URI are not set. Local servers keep running between restarts of the
// service (so data survives) and are stopped with `npm run services:stop`.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startApi, type RunningApi } from '../api/main.js';
import { connectMongo } from '../core/platform/db/mongo-connection.js';
import { loadConfigOrExit } from '../core/platform/lifecycle/run-process.js';
import { createShutdown, exitOnSignals } from '../core/platform/lifecycle/shutdown.js';
import { StartCancelledError } from '../core/platform/lifecycle/start-cancel.js';
import type { RunningWorker } from '../core/platform/lifecycle/worker-lifecycle.js';
import { createLogger, maskContactsInText, type Logger } from '../core/platform/logger/logger.js';
import { reportCrashes } from '../core/platform/lifecycle/crash-report.js';
import { migrateStore } from '../core/migrations/migrate-store.js';
import { projectRoot } from '../core/platform/project-root.js';
import { startAllWorkers } from '../workers/all.js';
import { isAlive, parseFsyncMode, startMongoServer, startRedisServer } from './local-services.js';

const localDir = join(projectRoot, '.local');

interface ServiceRecord {
  pid: number;
  url: string;
  port: number;
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Reuses a local server left running by an earlier `npm start`, or starts a new detached one. */
async function ensureLocalService(name: string, start: () => Promise<ServiceRecord>): Promise<string> {
  const file = join(localDir, `${name}.json`);
  if (existsSync(file)) {
    const record = JSON.parse(readFileSync(file, 'utf8')) as ServiceRecord;
    if (isAlive(record.pid) && (await portAnswers(record.port))) return record.url;
  }
  const record = await start();
  writeFileSync(file, JSON.stringify(record));
  return record.url;
}

/** Secrets generated once per checkout so restarts keep tokens, OTPs and clients valid. */
function ensureLocalSecrets(): Record<string, string> {
  const file = join(localDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  const secrets = {
    ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    OTP_HMAC_KEY: randomBytes(32).toString('base64url'),
    OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

async function migrateLocalStore(uri: string, logger: Logger): Promise<void> {
  const mongo = await connectMongo(uri);
  try {
    await migrateStore(mongo, logger);
  } finally {
    await mongo.close();
  }
}

async function main(): Promise<void> {
  mkdirSync(localDir, { recursive: true });
  const env = { ...process.env };
  // A Redis Cluster given by its seed nodes is used as it is: no local Redis then.
  if (!env.REDIS_URL && !env.REDIS_CLUSTER_NODES) {
    env.REDIS_URL = await ensureLocalService('redis', () => startRedisServer({ dataDir: join(localDir, 'redis'), detached: true }));
  }
  const localMongo = !env.MONGODB_URI;
  if (!env.MONGODB_URI) {
    // On disk by default (every write journaled before it is acknowledged); `memory` for a
    // throw-away store.
    const fsync = parseFsyncMode(env.LOCAL_MONGO_FSYNC);
    const backend =
      env.LOCAL_MONGO_BACKEND === 'memory'
        ? 'memory'
        : { journalFile: join(localDir, 'mongo', 'journal.bson'), ...(fsync ? { fsync } : {}) };
    const base = await ensureLocalService('mongo', async () => {
      // Its warnings and errors: nothing reads its output once this process has gone.
      const server = await startMongoServer({ backend, detached: true, log: { file: join(localDir, 'mongo-server.log') } });
      // The journal's recovery report (a dropped torn record, for one) belongs on this console.
      for (const line of (server.startupOutput ?? '').split('\n'))
        if (line.startsWith('journal: ')) process.stdout.write(`MongoDB-wire server ${line}\n`);
      return { url: server.url, port: server.port, pid: server.pid };
    });
    env.MONGODB_URI = `${base}/svc-identity`;
  }
  const secrets = ensureLocalSecrets();
  // Only a token generated for this checkout is shown: one the operator gave is theirs to keep
  // out of consoles and captured output.
  const adminTokenGiven = Boolean(env.ADMIN_TOKEN);
  for (const [key, value] of Object.entries(secrets)) env[key] ||= value;

  const config = loadConfigOrExit(env);
  const logger = createLogger({ level: config.logLevel, name: 'svc-identity' });
  reportCrashes('svc-identity', logger);
  // Listening for SIGTERM/SIGINT from here on: a stop while the workers still wait for Redis gives
  // their start up at once (start-cancel.ts) and stops the API; a stop during the rest of the start
  // waits for it, then stops everything that started.
  const stopping = new AbortController();
  let api: RunningApi | undefined;
  let workers: RunningWorker | undefined;
  const starting = (async () => {
    // The local database is this checkout's own: migrate it as a deployment would before starting
    // (a MongoDB given in MONGODB_URI is migrated by its operator with `npm run migrate`).
    if (localMongo) await migrateLocalStore(config.mongodbUri, logger);
    api = await startApi(config, logger);
    workers = await startAllWorkers(config, logger, undefined, stopping.signal).catch(async (err: unknown) => {
      if (err instanceof StartCancelledError) throw err;
      // Not an API without workers (OTPs accepted and never sent): the API stops as at a SIGTERM.
      await api?.shutdown();
      throw new Error(`its workers did not start, so the API it had started was stopped: ${(err as Error).message}`, { cause: err });
    });
  })();
  // The API's drain starts at the signal, as in the `web` role (readiness 503, keep-alive clients
  // told to go over the drain window), while the workers finish their jobs: waiting for the
  // workers first would leave the API taking new requests on a process that is stopping.
  const shutdown = createShutdown(
    [
      {
        name: 'api and workers',
        run: async () => {
          stopping.abort();
          await starting.catch(() => undefined);
          const done = await Promise.all([api?.shutdown() ?? true, workers?.shutdown() ?? true]);
          if (!done.every(Boolean)) throw new Error('a shutdown step of the API or of a worker failed (logged above)');
        },
        // Each side bounds its own steps by the same deadline; this only catches a hang.
        minMs: config.shutdownDeadlineMs + 10000,
      },
    ],
    logger,
    config.shutdownDeadlineMs,
  );
  exitOnSignals(shutdown, logger);
  try {
    await starting;
  } catch (err) {
    // Stopped on a signal while waiting (startAllWorkers said so): the shutdown above stops what
    // started and exits 0.
    if (err instanceof StartCancelledError) return;
    throw err;
  }
  const base = config.publicUrl;
  process.stdout.write(
    [
      '',
      `svc-identity is running at ${base}`,
      `  API docs:    ${base}/docs`,
      ...(config.demoApprover ? [`  Approver:    ${base}/demo/approver/ (example app)`] : []),
      `  Admin token: ${adminTokenGiven ? '(from ADMIN_TOKEN)' : (config.adminToken ?? '(ADMIN_TOKEN not set)')}`,
      `  Redis:       ${env.REDIS_CLUSTER_NODES ? `cluster ${env.REDIS_CLUSTER_NODES}` : (env.REDIS_URL ?? '').replace(/\/\/[^@]*@/, '//***@')}`,
      `  MongoDB:     ${env.MONGODB_URI.replace(/\/\/[^@]*@/, '//***@')}`,
      '',
    ].join('\n') + '\n',
  );
}

main().catch((err: unknown) => {
  // A failure described here (its cause logged above) in one line; any other with its stack. Masked
  // as log lines are: the migration at start may stop on a unique-key error quoting an address.
  const told =
    err instanceof Error && err.cause !== undefined ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  console.error('svc-identity failed to start:', maskContactsInText(told));
  process.exit(1);
});
