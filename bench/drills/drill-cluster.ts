// The system under drill: local Redis (append-only file, as `npm start` runs it) or a local
// Redis Cluster of 3 masters with a replica each, the local MongoDB-wire server on its journal,
// and the Procfile roles as separate processes, each of which can be killed, stopped and
// started again on the same ports and files.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/platform/project-root.js';
import { startRedisCluster, type LocalRedisCluster } from '../../scripts/local-redis-cluster.js';
import { findFreePort, localServerLog, startMongoServer, startRedisServer, type LocalService } from '../../scripts/local-services.js';
import { readProcfile, type ProcfileLine } from '../../scripts/procfile.js';
import { startSmsProviderStub, type SmsProviderStub } from './provider-stub.js';

export type RoleName = 'api' | 'dispatch' | 'enrollment' | 'notifications';

export const ROLES: readonly RoleName[] = ['api', 'dispatch', 'enrollment', 'notifications'];

const PROCFILE_NAMES: Record<RoleName, string> = {
  api: 'web',
  dispatch: 'dispatch',
  enrollment: 'enrollment',
  notifications: 'notifications',
};

const ENTRIES: Record<RoleName, { entry: string; ready: string }> = {
  api: { entry: 'dist/api/main.js', ready: 'API listening' },
  dispatch: { entry: 'dist/workers/dispatch/main.js', ready: 'dispatch worker running' },
  enrollment: { entry: 'dist/workers/enrollment/main.js', ready: 'enrollment worker running' },
  // Its callback worker starts last, so once it is running the expiry worker is too.
  notifications: { entry: 'dist/workers/notifications/main.js', ready: 'notification-callback worker running' },
};

export interface RoleProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Cluster {
  env: Record<string, string>;
  apiUrl: string;
  mongoUrl: string;
  sms: SmsProviderStub;
  roles: Record<RoleName, RoleProcess>;
  startRole: (role: RoleName) => Promise<void>;
  /** Signals a role and waits for it to exit; resolves to its exit. */
  signalRole: (role: RoleName, signal: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  killRedis: () => Promise<void>;
  startRedis: () => Promise<void>;
  /** Set when the drills run on a Redis Cluster (then killRedis/startRedis are not available). */
  redisCluster: LocalRedisCluster | undefined;
  killMongo: () => Promise<void>;
  startMongo: () => Promise<void>;
  rssMb: (role: RoleName) => number | undefined;
  /** CPU time (user + system) the role's current process has used, in ms. */
  cpuMs: (role: RoleName) => number | undefined;
  stop: () => Promise<void>;
}

// USER_HZ: 100 on Linux for every architecture this runs on.
const CLOCK_TICKS_PER_S = 100;

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode as NodeJS.Signals | null });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function nodeOptions(runDir: string): Record<string, string> {
  const flags = [process.env.DRILL_NODE_OPTIONS ?? ''];
  if (process.env.DRILL_MEMORY_PROBE === '1') flags.push(`--import=${join(projectRoot, 'dist', 'bench', 'drills', 'memory-probe.js')}`);
  const options = flags.join(' ').trim();
  return options ? { NODE_OPTIONS: options, DRILL_MEMORY_DIR: join(runDir, 'memory') } : {};
}

/**
 * Each role's command from the Procfile, so that the drills run the roles the way operators do:
 * environment settings, Node flags, entry.
 */
function procfileCommand(procfile: ProcfileLine[], role: RoleName): ProcfileLine {
  const line = procfile.find((l) => l.type === PROCFILE_NAMES[role]);
  if (line?.program !== 'node' || line.entry !== ENTRIES[role].entry) {
    throw new Error(`Procfile line for ${role} must be '[NAME=value ...] node [flags] ${ENTRIES[role].entry}'`);
  }
  return line;
}

export interface ClusterOptions {
  /**
   * Run on a Redis Cluster of 3 masters with one replica each (append-only files, a master
   * unreachable for 2 s is replaced by its replica) instead of one Redis.
   */
  redisCluster?: boolean;
}

export async function startCluster(runDir: string, overrides: Record<string, string>, options: ClusterOptions = {}): Promise<Cluster> {
  const redisPort = await findFreePort();
  const mongoPort = await findFreePort();
  const apiPort = await findFreePort();
  const redisDir = join(runDir, 'redis');
  const journalFile = join(runDir, 'mongo', 'journal.bson');
  const redisCluster = options.redisCluster
    ? await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: 2000, dataDir: join(runDir, 'redis-cluster') })
    : undefined;
  let redis: LocalService | undefined = redisCluster ? undefined : await startRedisServer({ port: redisPort, dataDir: redisDir });
  let mongo: LocalService = await startMongoServer({ port: mongoPort, backend: { journalFile }, log: localServerLog('drills') });
  const sms = await startSmsProviderStub();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
    LOG_LEVEL: 'info',
    MONGODB_URI: `${mongo.url}/drills`,
    ...(redisCluster ? { REDIS_CLUSTER_NODES: redisCluster.seeds } : { REDIS_URL: (redis as LocalService).url }),
    QUEUE_PREFIX: 'drills',
    ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    OTP_HMAC_KEY: randomBytes(32).toString('base64url'),
    OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    RATE_LIMIT_OTP_PER_USER: '1000000',
    RATE_LIMIT_OTP_PER_CLIENT: '1000000',
    RATE_LIMIT_OTP_PER_ENTERPRISE: '1000000',
    RATE_LIMIT_ENROLLMENT_MESSAGES_PER_CLIENT: '1000000',
    RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE: '1000000',
    RATE_LIMIT_SIGN_IN_STARTS_PER_IP: '1000000',
    TWILIO_ACCOUNT_SID: `AC${randomBytes(16).toString('hex')}`,
    TWILIO_AUTH_TOKEN: randomBytes(16).toString('hex'),
    TWILIO_FROM: '+15005550006',
    TWILIO_API_BASE_URL: sms.url,
    // Node flags for every role (for example a heap cap), to see their effect on RSS; the memory
    // probe splits each role's memory into heap spaces and the rest.
    ...nodeOptions(runDir),
    // glibc's malloc arenas per thread are a usual source of RSS beyond the heap.
    ...(process.env.MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX } : {}),
    ...overrides,
  };
  const procfile = readProcfile();
  const logs: Partial<Record<RoleName, WriteStream>> = {};
  const roles = {} as Record<RoleName, RoleProcess>;

  const startRole = async (role: RoleName) => {
    const { entry, ready } = ENTRIES[role];
    logs[role] ??= createWriteStream(join(runDir, `${role}.log`), { flags: 'a' });
    const command = procfileCommand(procfile, role);
    const args = [...command.flags, join(projectRoot, entry)];
    // This run's settings (MALLOC_ARENA_MAX among them) win over the Procfile's.
    const child = spawn(process.execPath, args, { env: { ...command.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    const isReady = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${role} not ready in 60 s; see ${join(runDir, `${role}.log`)}`)), 60000);
      const onData = (chunk: Buffer) => {
        logs[role]?.write(chunk);
        if (seen.length < 100_000) seen += chunk.toString();
        if (seen.includes(ready)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => logs[role]?.write(chunk));
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`${role} exited before it was ready; see ${join(runDir, `${role}.log`)}`));
      });
    });
    roles[role] = { child, exited: exitOf(child) };
    await isReady;
  };

  for (const role of ROLES) await startRole(role);

  return {
    env,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    mongoUrl: `${mongo.url}/drills`,
    sms,
    roles,
    startRole,
    signalRole: async (role, signal) => {
      roles[role].child.kill(signal);
      return roles[role].exited;
    },
    killRedis: async () => {
      if (!redis) throw new Error('the drills run on a Redis Cluster: kill one of its nodes instead');
      process.kill(redis.pid, 'SIGKILL');
      await redis.stop();
    },
    startRedis: async () => {
      if (redisCluster) throw new Error('the drills run on a Redis Cluster');
      redis = await startRedisServer({ port: redisPort, dataDir: redisDir });
    },
    redisCluster,
    killMongo: async () => {
      process.kill(mongo.pid, 'SIGKILL');
      await mongo.stop();
    },
    startMongo: async () => {
      mongo = await startMongoServer({ port: mongoPort, backend: { journalFile }, log: localServerLog('drills') });
    },
    rssMb: (role) => {
      try {
        const status = readFileSync(`/proc/${roles[role].child.pid}/status`, 'utf8');
        const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
        return Number.isFinite(kb) ? kb / 1024 : undefined;
      } catch {
        return undefined;
      }
    },
    cpuMs: (role) => {
      try {
        // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name): utime, stime in ticks.
        const stat = readFileSync(`/proc/${roles[role].child.pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
      } catch {
        return undefined;
      }
    },
    stop: async () => {
      for (const role of ROLES) {
        const running = roles[role];
        if (running.child.exitCode === null && running.child.signalCode === null) {
          running.child.kill('SIGTERM');
          await running.exited;
        }
      }
      await redis?.stop();
      await redisCluster?.stop();
      await mongo.stop();
      await sms.close();
      Object.values(logs).forEach((log) => log?.end());
    },
  };
}
