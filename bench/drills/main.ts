// Fault drills: the Procfile roles as separate processes on local Redis and the local
// MongoDB-wire server, traced OTPs at a fixed rate, one fault per drill (kill -9 and SIGTERM of
// every role, kill -9 and restart of Redis and of the MongoDB-wire server), then a count of what
// was accepted, delivered once, lost and duplicated, and how long recovery took.
//
//   npm run drills                                   every drill (2,000 OTPs each at 100/s)
//   npm run drills -- --only=dispatch-kill9,api-sigterm --rate=200 --seconds=10
//   npm run drills -- --soak=30                      30 minutes of load, RSS of each role every 10 s
//   npm run drills -- --redis-cluster                on a 3-master + 3-replica Redis Cluster: kill -9
//                                                    the master of the queues' slot, its replica takes over
//
// Results are printed and written to bench/results/drills.json (drills-soak.json for a soak,
// drills-redis-cluster.json on a Redis Cluster).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerBenchClient } from '../support/bench-clients.js';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { toUserDoc, userModel } from '../../core/users/users.repository.js';
import { ROLES, startCluster, type Cluster, type RoleName } from './drill-cluster.js';
import { DRILL_TEMPLATE, startOtpLoad, type SentOtp } from './otp-load.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Drill {
  name: string;
  /** Injects the fault and brings the part back; resolves once it is back. */
  inject: (cluster: Cluster) => Promise<Record<string, unknown>>;
}

const killRole = (role: RoleName): Drill => ({
  name: `${role}-kill9`,
  inject: async (cluster) => {
    await cluster.signalRole(role, 'SIGKILL');
    await sleep(1000);
    await cluster.startRole(role);
    return {};
  },
});

const stopRole = (role: RoleName): Drill => ({
  name: `${role}-sigterm`,
  inject: async (cluster) => {
    const exit = await cluster.signalRole(role, 'SIGTERM');
    await cluster.startRole(role);
    return { exitCode: exit.code };
  },
});

const DRILLS: Drill[] = [
  killRole('dispatch'),
  stopRole('dispatch'),
  killRole('enrollment'),
  stopRole('enrollment'),
  killRole('notifications'),
  stopRole('notifications'),
  killRole('api'),
  stopRole('api'),
  {
    name: 'redis-kill9',
    inject: async (cluster) => {
      await cluster.killRedis();
      await sleep(2000);
      await cluster.startRedis();
      return {};
    },
  },
  {
    name: 'mongo-kill9',
    inject: async (cluster) => {
      await cluster.killMongo();
      await sleep(2000);
      await cluster.startMongo();
      return {};
    },
  },
];

/**
 * kill -9 of the master that serves the queues' hash tag (and so every queue, the sent journal
 * and the limits); back once its replica has taken over and every node agrees the cluster is ok.
 */
const REDIS_FAILOVER: Drill = {
  name: 'redis-master-kill9',
  inject: async (cluster) => {
    const redis = cluster.redisCluster;
    if (!redis) throw new Error('redis-master-kill9 needs --redis-cluster');
    const master = await redis.masterFor(`{${cluster.env.QUEUE_PREFIX}}`);
    const killedAt = Date.now();
    await master.kill();
    await redis.waitUntilHealthy(60_000);
    const promoted = await redis.masterFor(`{${cluster.env.QUEUE_PREFIX}}`);
    return { killedMasterPort: master.port, promotedPort: promoted.port, clusterOkAfterMs: Date.now() - killedAt };
  },
};

function argument(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function setUp(cluster: Cluster, userCount: number) {
  const mongo = await connectMongo(cluster.mongoUrl);
  try {
    const { client, clientSecret } = await registerBenchClient(mongo, {
      name: 'drills',
      scopes: ['otp'],
      allowedIps: ['127.0.0.1/32', '::1/128'],
    });
    const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(clientSecret as string)}`).toString('base64');
    const res = await fetch(`${cluster.apiUrl}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const token = ((await res.json()) as { access_token: string }).access_token;
    const template = await fetch(`${cluster.apiUrl}/admin/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.env.ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: DRILL_TEMPLATE, channel: 'SMS', text: 'Your code is __SVC_OTP__ (trace __TRACE__)' }),
    });
    if (template.status !== 201 && template.status !== 200)
      throw new Error(`template not created: ${template.status} ${await template.text()}`);
    const Users = await userModel(mongo);
    const now = new Date();
    const users = Array.from({ length: userCount }, (_, i) => `drill-user${i}`);
    await Users.insertMany(
      users.map((userId, i) => {
        const mobileNumber = `+1555${String(i).padStart(7, '0')}`;
        return toUserDoc({
          enterpriseId: DEFAULT_ENTERPRISE_ID,
          userId,
          loginId: userId,
          primaryGroup: 'retail',
          secondaryGroups: [],
          firstName: 'Drill',
          lastName: 'User',
          status: 'ACTIVE',
          sourceType: 'SVC',
          clientId: client.clientId,
          mobileNumber,
          createdAt: now,
          updatedAt: now,
        });
      }),
    );
    return { token, users };
  } finally {
    await mongo.close();
  }
}

function answersIn(sent: SentOtp[], from: number, to: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of sent.filter((x) => x.sentAt >= from && x.sentAt <= to)) {
    const key = s.status !== undefined ? String(s.status) : (s.error ?? 'no answer');
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Waits until the provider got every accepted trace (bounded), then a little longer for late duplicates. */
async function settle(cluster: Cluster, accepted: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (accepted.some((trace) => !cluster.sms.received.has(trace)) && Date.now() < deadline) await sleep(500);
  await sleep(3000);
}

async function runDrill(cluster: Cluster, drill: Drill, users: string[], token: string, rate: number, seconds: number, settleMs: number) {
  const load = startOtpLoad({ apiUrl: cluster.apiUrl, token, users, ratePerSecond: rate, seconds, tracePrefix: drill.name });
  await sleep((seconds * 1000) / 3);
  const plannedEnd = Date.now() + (seconds * 2000) / 3;
  const faultAt = Date.now();
  // Load goes on through the fault and for a while after the part is back, so its return is seen.
  load.endAt(Infinity);
  const details = await drill.inject(cluster);
  const backAt = Date.now();
  load.endAt(Math.max(plannedEnd, backAt + (seconds * 1000) / 3));
  await load.finished;
  const accepted = new Map(load.sent.filter((s) => s.status === 200).map((s) => [s.trace, s]));
  await settle(cluster, [...accepted.keys()], settleMs);
  const delivered = cluster.sms.received;

  let once = 0;
  let lost = 0;
  let duplicated = 0;
  const latencies: number[] = [];
  for (const [trace, s] of accepted) {
    const times = delivered.get(trace) ?? [];
    if (times.length === 0) lost += 1;
    else if (times.length === 1) once += 1;
    else duplicated += times.length - 1;
    if (times.length > 0) latencies.push(Math.min(...times) - s.sentAt);
  }
  const sentWithoutAcceptance = load.sent.filter((s) => s.status !== 200 && delivered.has(s.trace)).length;
  // Service back: the first 200 sent after the last refused request of the fault window.
  const afterFault = load.sent.filter((s) => s.sentAt >= faultAt);
  const lastRefused = afterFault.filter((s) => s.status !== 200).reduce((max, s) => Math.max(max, s.sentAt), 0);
  const firstOkAfter = afterFault.find((s) => s.status === 200 && s.sentAt > lastRefused);
  const serviceBackMs = lastRefused === 0 ? 0 : firstOkAfter ? firstOkAfter.sentAt - faultAt : undefined;
  // Recovery: when the last OTP accepted around the fault (from 2 s before it until the part was
  // back) reached the provider, counted from the fault.
  const around = [...accepted.values()].filter((s) => s.sentAt >= faultAt - 2000 && s.sentAt <= backAt);
  const recoveryMs = Math.max(0, ...around.map((s) => Math.min(...(delivered.get(s.trace) ?? [Infinity])) - faultAt));
  return {
    drill: drill.name,
    requested: load.sent.length,
    accepted: accepted.size,
    deliveredOnce: once,
    lost,
    duplicated,
    duplicateRate: accepted.size === 0 ? 0 : duplicated / accepted.size,
    sentWithoutAcceptance,
    faultLastedMs: backAt - faultAt,
    serviceBackMs,
    recoveryMs: Number.isFinite(recoveryMs) ? recoveryMs : 'not recovered',
    latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100) },
    answersDuringFault: answersIn(load.sent, faultAt, backAt + 2000),
    ...details,
  };
}

/** RSS limits of the soak: the API 200 MB, every worker 150 MB. */
const RSS_LIMIT_MB: Record<RoleName, number> = { api: 200, dispatch: 150, enrollment: 150, notifications: 150 };

async function soak(cluster: Cluster, users: string[], token: string, rate: number, minutes: number) {
  const samples: ({ atS: number } & Partial<Record<RoleName, number>>)[] = [];
  const started = Date.now();
  const sample = () =>
    samples.push({
      atS: Math.round((Date.now() - started) / 1000),
      ...Object.fromEntries(ROLES.map((role) => [role, cluster.rssMb(role)])),
    });
  sample();
  const cpuAtStart = Object.fromEntries(ROLES.map((role) => [role, cluster.cpuMs(role) ?? 0])) as Record<RoleName, number>;
  const timer = setInterval(() => {
    sample();
    const last = samples[samples.length - 1];
    process.stdout.write(`  t=${last?.atS}s RSS MB ${ROLES.map((role) => `${role}=${last?.[role]?.toFixed(0)}`).join(' ')}\n`);
  }, 10_000);
  const load = startOtpLoad({ apiUrl: cluster.apiUrl, token, users, ratePerSecond: rate, seconds: minutes * 60, tracePrefix: 'soak' });
  await load.finished;
  clearInterval(timer);
  sample();
  const cpuMsPerOtp = Object.fromEntries(
    ROLES.map((role) => [
      role,
      Math.round((((cluster.cpuMs(role) ?? 0) - cpuAtStart[role]) / Math.max(1, load.sent.length)) * 1000) / 1000,
    ]),
  );
  const accepted = load.sent.filter((s) => s.status === 200).map((s) => s.trace);
  await settle(cluster, accepted, 120_000);
  const delivered = cluster.sms.received;
  const lost = accepted.filter((trace) => !delivered.has(trace)).length;
  const duplicated = accepted.reduce((n, trace) => n + Math.max(0, (delivered.get(trace)?.length ?? 0) - 1), 0);
  const summary = (role: RoleName) => {
    const values = samples.map((s) => s[role]).filter((v): v is number => v !== undefined);
    return { first: values[0], max: Math.max(...values), last: values[values.length - 1] };
  };
  const rss = Object.fromEntries(ROLES.map((role) => [role, summary(role)])) as Record<RoleName, ReturnType<typeof summary>>;
  return {
    minutes,
    rate,
    requested: load.sent.length,
    accepted: accepted.length,
    lost,
    duplicated,
    rssMb: rss,
    cpuMsPerOtp,
    withinLimits: ROLES.every((role) => rss[role].max <= RSS_LIMIT_MB[role]),
    samples,
  };
}

/** What shaped the roles' memory: their Procfile lines and the extra flags of this run. */
function soakSettings() {
  return {
    procfile: readFileSync(join(projectRoot, 'Procfile'), 'utf8').trim().split('\n'),
    DRILL_NODE_OPTIONS: process.env.DRILL_NODE_OPTIONS ?? '',
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '',
  };
}

async function main(): Promise<void> {
  const rate = Number(argument('rate') ?? 100);
  const seconds = Number(argument('seconds') ?? 20);
  const settleMs = Number(argument('settle-seconds') ?? 180) * 1000;
  const soakMinutes = argument('soak') === undefined ? undefined : Number(argument('soak'));
  const only = argument('only')?.split(',');
  const onRedisCluster = process.argv.includes('--redis-cluster');
  // On a Redis Cluster the Redis drill is a failover; the other drills are the same as on one Redis.
  const available = onRedisCluster ? [REDIS_FAILOVER, ...DRILLS.filter((d) => d.name !== 'redis-kill9')] : DRILLS;
  const drills = only ? available.filter((d) => only.includes(d.name)) : onRedisCluster ? [REDIS_FAILOVER] : DRILLS;
  const runDir = mkdtempSync(join(tmpdir(), 'svc-drills-'));
  process.stdout.write(`role logs and data in ${runDir}\n`);
  const cluster = await startCluster(runDir, {}, { redisCluster: onRedisCluster });
  const resultsDir = join(projectRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  try {
    const { token, users } = await setUp(cluster, 100);
    if (soakMinutes !== undefined) {
      process.stdout.write(`soak: ${soakMinutes} min at ${rate} OTP/s\n`);
      const result = await soak(cluster, users, token, rate, soakMinutes);
      const { samples, ...rest } = result;
      process.stdout.write(`${JSON.stringify(rest, null, 2)}\n`);
      writeFileSync(
        join(resultsDir, 'drills-soak.json'),
        `${JSON.stringify({ at: new Date().toISOString(), ...result, settings: soakSettings(), samples }, null, 2)}\n`,
      );
      return;
    }
    const results = [];
    for (const drill of drills) {
      process.stdout.write(
        `drill ${drill.name}: ${rate} OTPs/s for ${seconds} s (longer when the fault outlasts it), fault at ${Math.round(seconds / 3)} s\n`,
      );
      const result = await runDrill(cluster, drill, users, token, rate, seconds, settleMs);
      const goals = result.lost === 0 && result.duplicateRate <= 0.001;
      process.stdout.write(`${JSON.stringify(result)}\n  goals (0 lost, duplicates <= 0.1 %): ${goals ? 'met' : 'NOT MET'}\n`);
      results.push({ ...result, goalsMet: goals });
    }
    process.stdout.write('\ndrill            requested accepted once lost dup  sent-no-200 back-ms recovery-ms answers-during-fault\n');
    for (const r of results) {
      process.stdout.write(
        `${r.drill.padEnd(16)} ${String(r.requested).padStart(9)} ${String(r.accepted).padStart(8)} ${String(r.deliveredOnce).padStart(4)} ${String(r.lost).padStart(4)} ${String(r.duplicated).padStart(4)} ${String(r.sentWithoutAcceptance).padStart(11)} ${String(r.serviceBackMs ?? '-').padStart(7)} ${String(r.recoveryMs).padStart(11)} ${JSON.stringify(r.answersDuringFault)}\n`,
      );
    }
    writeFileSync(
      join(resultsDir, onRedisCluster ? 'drills-redis-cluster.json' : 'drills.json'),
      `${JSON.stringify({ at: new Date().toISOString(), rate, seconds, redis: onRedisCluster ? '3 masters + 3 replicas' : 'one', results }, null, 2)}\n`,
    );
  } finally {
    await cluster.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
