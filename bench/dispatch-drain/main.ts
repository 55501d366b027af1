// bench/dispatch-drain: jobs per second of the project's dispatch worker (its real entry point,
// Twilio SDK pointed at a local stub) draining N pre-loaded OTP deliveries (rows and jobs as the
// API writes them, each job carrying its sealed row), against a bare BullMQ
// worker posting each job to the same stub with fetch, at the same concurrency. Jobs are added
// while the queue is paused; the clock starts at resume and stops when nothing is waiting or
// active. Arms interleave (alternating which goes first); figure: median of per-pair ratios.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { sealDelivery } from '../../core/deliveries/delivery-envelope.js';
import type { Delivery } from '../../core/deliveries/delivery.types.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { encryptSecret } from '../../core/crypto/secret-box.js';
import { DISPATCH_JOB, DISPATCH_JOB_OPTIONS } from '../../core/platform/queues/dispatch.queue.js';
import { seedTemplates } from '../../core/templates/templates.seeder.js';
import { createTemplatesRepository } from '../../core/templates/templates.repository.js';
import { createLogger } from '../../core/platform/logger/logger.js';
import {
  envInt,
  envString,
  machineInfo,
  median,
  printTable,
  processCpuMs,
  round,
  runBenchmark,
  sleep,
  startInfra,
  waitUntilIdle,
  wallMs,
  writeResult,
} from '../support/bench-kit.js';
import {
  benchMobile,
  connectMongo,
  projectEnv,
  startBareWorker,
  startProjectWorker,
  startProviderStub,
  storesOf,
} from '../support/arms.js';

const JOBS = envInt('JOBS', 5000);
const PAIRS = envInt('PAIRS', 5);
const CONCURRENCY = envInt('CONCURRENCY', 10);
const TIMEOUT_S = envInt('DRAIN_TIMEOUT_S', 300);
const GOAL = 0.9;

type Arm = 'project' | 'baseline';

interface DrainRun {
  /** CPU per job of the worker process, the MongoDB-wire server, Redis and the stub. */
  cpuMsPerJob: Record<string, number>;
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  delivered: number;
  failed: number;
}

await runBenchmark('dispatch-drain', async (cleanup) => {
  const started = new Date();
  const infra = await startInfra();
  cleanup(infra.stop);
  const stub = await startProviderStub(envInt('STUB_DELAY_MS', 0));
  cleanup(stub.stop);
  const env = projectEnv(storesOf(infra), 'bench_drain_project', 'bdp', stub.url);
  const mongo = await connectMongo(env.MONGODB_URI);
  cleanup(() => mongo.close());
  await seedTemplates(createTemplatesRepository(mongo), createLogger({ level: 'warn' }));
  const cpuProf = envString('BENCH_CPU_PROF_DIR', '');
  const worker = await startProjectWorker(
    { ...env, DISPATCH_CONCURRENCY: String(CONCURRENCY) },
    cpuProf ? ['--cpu-prof', '--cpu-prof-dir', cpuProf] : [],
  );
  cleanup(worker.stop);
  // BARE_WORK=required: the bare worker also reads each row and records the outcome (see bare-worker.ts).
  const bareWork = envString('BARE_WORK', 'minimal');
  const bareMongoUri = `${infra.mongo.url}/bench_drain_baseline`;
  const bare = await startBareWorker(infra.redis.url, 'bdb', stub.url, CONCURRENCY, bareWork === 'required' ? bareMongoUri : undefined);
  cleanup(bare.stop);

  const redis = new Redis(infra.redis.url, { maxRetriesPerRequest: null });
  cleanup(async () => redis.disconnect());
  const queues: Record<Arm, Queue> = {
    project: new Queue('dispatch', { connection: redis, prefix: 'bdp' }),
    baseline: new Queue('dispatch', { connection: redis, prefix: 'bdb' }),
  };
  cleanup(() => Promise.all(Object.values(queues).map((q) => q.close())));
  const deliveries = createDeliveriesRepository(mongo);
  const otps = mongo.collection('otps');
  const otpRecordOf = (otpUuid: string, expiresAt: Date, createdAt: Date) => ({
    _id: otpUuid as never,
    enterpriseId: 'default',
    clientId: 'bench',
    userId: 'bench-user',
    digest: 'not-checked-here',
    hashSpec: 'N-6',
    attempts: 3,
    attemptsUsed: 0,
    status: 'ACTIVE',
    expiresAt,
    generateJwt: false,
    channels: ['SMS'],
    createdAt,
  });
  const bareConnection = bareWork === 'required' ? await connectMongo(bareMongoUri) : undefined;
  if (bareConnection) cleanup(() => bareConnection.close());
  const bareStore = bareConnection ? { connection: bareConnection, deliveries: createDeliveriesRepository(bareConnection) } : undefined;
  const { encryptionKey } = otpKeysFromConfig({ otpHmacKey: env.OTP_HMAC_KEY, otpEncryptionKey: env.OTP_ENCRYPTION_KEY });

  /**
   * What the API would have written and queued for N one-channel OTPs: a QUEUED delivery row each,
   * and the row sealed for its job (core/deliveries/delivery-envelope.ts).
   */
  async function preloadRows(ids: string[], into = deliveries): Promise<Map<string, string>> {
    const sealed = new Map<string, string>();
    const at = new Date();
    const notAfter = new Date(at.getTime() + 3600 * 1000);
    for (let from = 0; from < ids.length; from += 1000) {
      const rows: Delivery[] = ids.slice(from, from + 1000).map((id, k) => ({
        id,
        kind: 'otp',
        // As the API stamps it: a sealed job without its enterprise makes the worker read the row.
        enterpriseId: 'default',
        refId: id.slice(4, -4),
        channel: 'SMS',
        to: benchMobile(from + k),
        template: 'otp_sms',
        macros: {},
        secretMacros: encryptSecret(JSON.stringify({ __SVC_OTP__: String(100000 + ((from + k) % 900000)) }), encryptionKey, id),
        state: 'QUEUED',
        attempts: 0,
        notAfter,
        // Each accepted request stamps its own row.
        queuedAt: new Date(at.getTime() - ids.length + from + k),
        updatedAt: new Date(at.getTime() - ids.length + from + k),
      }));
      await into.insertMany(rows);
      // The API writes each row with its OTP record; the worker reads the OTP's status before the
      // send and skips a row whose OTP was never stored (its request was answered with an error).
      if (into === deliveries) await otps.insertMany(rows.map((row) => otpRecordOf(row.refId, notAfter, at)));
      for (const row of rows) {
        const envelope = sealDelivery(row, encryptionKey);
        if (envelope !== undefined) sealed.set(row.id, envelope);
      }
    }
    return sealed;
  }

  async function drain(arm: Arm, jobs = JOBS): Promise<DrainRun> {
    const queue = queues[arm];
    const ids = Array.from({ length: jobs }, () => `otp-${randomUUID()}-SMS`);
    let sealed = new Map<string, string>();
    if (arm === 'project') {
      // Each run starts from an empty collection so pairs stay comparable.
      await mongo.collection('deliveries').deleteMany({});
      await otps.deleteMany({});
      sealed = await preloadRows(ids);
    } else if (bareStore) {
      await bareStore.connection.collection('deliveries').deleteMany({});
      await preloadRows(ids, bareStore.deliveries);
    }
    await queue.pause();
    for (let from = 0; from < ids.length; from += 1000) {
      await queue.addBulk(
        ids.slice(from, from + 1000).map((deliveryId) => {
          const envelope = sealed.get(deliveryId);
          return {
            name: DISPATCH_JOB,
            data: envelope === undefined ? { deliveryId } : { deliveryId, sealed: envelope },
            opts: { ...DISPATCH_JOB_OPTIONS, jobId: deliveryId },
          };
        }),
      );
    }
    const failedBefore = await queue.getFailedCount();
    await stub.arrivals(true);
    const pids = {
      worker: (arm === 'project' ? worker : bare).child.pid,
      mongo: infra.mongo.pid,
      redis: infra.redis.pid,
      stub: stub.child.pid,
    };
    // The preload leaves the MongoDB-wire server's JVM collecting garbage for a while; measuring
    // starts once every process is quiet, so that work is not billed to the drain.
    await waitUntilIdle(Object.values(pids));
    const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuMs(pid)]));
    const t0 = wallMs();
    await queue.resume();
    const deadline = Date.now() + TIMEOUT_S * 1000;
    for (;;) {
      const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).every((c) => c === 0)) break;
      if (Date.now() > deadline) throw new Error(`${arm}: not drained in ${TIMEOUT_S} s: ${JSON.stringify(counts)}`);
      await sleep(20);
    }
    const seconds = (wallMs() - t0) / 1000;
    const cpuMsPerJob = Object.fromEntries(
      Object.entries(pids).map(([k, pid]) => [k, round((processCpuMs(pid) - cpuBefore[k]) / jobs, 3)]),
    );
    const failed = (await queue.getFailedCount()) - failedBefore;
    const delivered = (await stub.arrivals(true)).arrivals.length;
    if (failed > 0 || delivered !== jobs) throw new Error(`${arm}: ${failed} failed jobs, ${delivered}/${jobs} messages at the stub`);
    return { cpuMsPerJob, jobs, seconds: round(seconds, 3), jobsPerSecond: round(jobs / seconds, 1), delivered, failed };
  }

  console.log(`dispatch-drain: ${JOBS} jobs per run, ${PAIRS} pairs, concurrency ${CONCURRENCY}`);
  // Both JITs (V8 and the MongoDB-wire server's JVM) need it: with 1000 the first pair ran 10-20 % lower.
  const WARMUP_JOBS = envInt('WARMUP_JOBS', 5000);
  if (WARMUP_JOBS > 0) {
    await drain('project', WARMUP_JOBS);
    await drain('baseline', WARMUP_JOBS);
  }
  const pairs: { pair: number; order: string; project: DrainRun; baseline: DrainRun; ratio: number }[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const order: Arm[] = i % 2 === 0 ? ['project', 'baseline'] : ['baseline', 'project'];
    const got: Partial<Record<Arm, DrainRun>> = {};
    for (const arm of order) got[arm] = await drain(arm);
    const project = got.project as DrainRun;
    const base = got.baseline as DrainRun;
    pairs.push({ pair: i + 1, order: order.join(' then '), project, baseline: base, ratio: project.jobsPerSecond / base.jobsPerSecond });
    console.log(`  pair ${i + 1}: project ${project.jobsPerSecond} jobs/s, baseline ${base.jobsPerSecond} jobs/s`);
  }
  const medianRatio = median(pairs.map((p) => p.ratio));
  console.log('');
  printTable(
    ['pair', 'first', 'project jobs/s', 'baseline jobs/s', 'ratio', 'project s', 'baseline s'],
    pairs.map((p) => [
      p.pair,
      p.order.split(' ')[0],
      p.project.jobsPerSecond,
      p.baseline.jobsPerSecond,
      round(p.ratio, 3),
      p.project.seconds,
      p.baseline.seconds,
    ]),
  );
  const cpu = (arm: Arm, k: string) => round(median(pairs.map((p) => p[arm].cpuMsPerJob[k])), 3);
  const cpuSummary = Object.fromEntries(
    (['project', 'baseline'] as const).map((arm) => [
      arm,
      { worker: cpu(arm, 'worker'), mongo: cpu(arm, 'mongo'), redis: cpu(arm, 'redis'), stub: cpu(arm, 'stub') },
    ]),
  );
  console.log('\nCPU ms per job (median over pairs):');
  printTable(
    ['arm', 'worker process', 'MongoDB-wire server', 'Redis', 'provider stub'],
    (['project', 'baseline'] as const).map((arm) => [
      arm,
      cpuSummary[arm].worker,
      cpuSummary[arm].mongo,
      cpuSummary[arm].redis,
      cpuSummary[arm].stub,
    ]),
  );
  console.log(`\nmedian ratio project/baseline: ${round(medianRatio, 3)} (goal >= ${GOAL}: ${medianRatio >= GOAL ? 'met' : 'MISSED'})`);
  const file = writeResult('dispatch-drain', {
    benchmark: 'dispatch-drain',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    method: {
      jobsPerRun: JOBS,
      pairs: PAIRS,
      concurrency: CONCURRENCY,
      interleaving: 'pairs alternate which arm runs first',
      deliveriesCollection: 'emptied before each run that preloads rows, so runs start alike',
      bareWorker: { client: envString('BARE_CLIENT', 'fetch'), work: bareWork },
      clock: 'from queue resume (jobs added while paused) until nothing waits or runs; every message checked at the stub',
      figure: 'median of per-pair ratios of jobs per second, project/baseline',
      warmupJobsPerArm: WARMUP_JOBS,
      stubDelayMs: envInt('STUB_DELAY_MS', 0),
      projectLogLevel: envString('BENCH_LOG_LEVEL', 'info'),
    },
    pairs,
    cpuMsPerJobMedian: cpuSummary,
    medianRatio: round(medianRatio, 4),
    goal: GOAL,
    goalMet: medianRatio >= GOAL,
  });
  console.log(`result written to ${file}`);
});
