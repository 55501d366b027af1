// bench/otp-e2e: latency from POST /v1/svc-otp to the provider receiving the SMS, at a fixed
// offered rate of half the baseline's maximum accept rate, for the project (API + dispatch
// worker, real Twilio SDK pointed at a local stub) and for the baseline (minimal app + bare
// BullMQ worker posting to the same stub with fetch). The stub, in its own process, records the
// wall-clock arrival of each message and its `To`, which identifies the request: the project
// sends to user i's own mobile number; the bare worker sends To = the delivery id of the otpUuid.
// With BASELINE_WORK=required the bare path also does the store work the service must do, the
// plainest way: the app reads the user, takes two rate limits and inserts the delivery row; the
// worker reads the row before the send and records the outcome on it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readProcfile } from '../../scripts/procfile.js';
import { attributeTail, overlapsAny, readGcTimeline, readJvmPauses, type GcEvent, type TimedRequest } from './tail-attribution.js';
import { autocannonPost } from '../support/load.js';
import { openLoopPost, type SentRequest } from '../support/open-loop.js';
import {
  envInt,
  envString,
  machineInfo,
  median,
  percentile,
  printTable,
  distDir,
  projectRoot,
  round,
  runBenchmark,
  sleep,
  startInfra,
  withCpu,
  writeResult,
} from '../support/bench-kit.js';
import {
  benchMobile,
  benchUserId,
  connectMongo,
  insertBenchUsers,
  otpRequestBody,
  projectAccessToken,
  projectEnv,
  startBareWorker,
  startBaselineApp,
  insertBaselineUsers,
  startProjectApi,
  startProjectWorker,
  startProviderStub,
  storesOf,
  type ProviderStub,
} from '../support/arms.js';

const PAIRS = envInt('PAIRS', 2);
const DURATION_S = envInt('DURATION_S', 5);
const MAX_PROBE_S = envInt('MAX_PROBE_S', 5);
const WARMUP_S = envInt('WARMUP_S', 5);
const CONNECTIONS = envInt('CONNECTIONS', 10);
const CONCURRENCY = envInt('CONCURRENCY', 10);
const FIXED_RATE = envInt('RATE', 0);
const DRAIN_TIMEOUT_S = envInt('DRAIN_TIMEOUT_S', 240);
const BASELINE_WORK = envString('BASELINE_WORK', 'minimal');
// PROCFILE_FLAGS=1: the API and the dispatch worker run with their Procfile lines' Node flags (the
// heap bounds operators run them with) instead of Node's defaults.
const PROCFILE_FLAGS = envInt('PROCFILE_FLAGS', 0) === 1;
const BASELINE_DB = 'bench_e2e_baseline';
// IDLE_S: seconds with nothing offered, after set-up and before the warm-up, over which each
// process's CPU is measured (timers and polls, which cost the same whatever the rate).
const IDLE_S = envInt('IDLE_S', 5);
// TAIL_TRACE=1: the API and the dispatch worker record their garbage collections and event-loop stalls
// (bench/support/gc-timeline.ts) and the result says how often they overlapped the project's
// slowest requests against those around the median (tail-attribution.ts).
// The MongoDB-wire server (a JVM) logs its collection pauses too, and the result counts the slowest
// requests a pause overlapped. TAIL_TRACE_STALLS=0 leaves out the stall sampler, whose 1 ms timers
// in two processes raise the tail they measure.
const TAIL_TRACE = envInt('TAIL_TRACE', 0) === 1;

// MONGO_JVM_OPTIONS: JVM options for the MongoDB-wire server (a stand-in for mongod, which has no
// collector), e.g. `-Xmn16m` for shorter, more frequent young collections.
const MONGO_JVM_OPTIONS = envString('MONGO_JVM_OPTIONS', '').split(' ').filter(Boolean);

type Arm = 'project' | 'baseline';

const prefixed = (prefix: string, pids: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(pids).map(([name, pid]) => [`${prefix} ${name}`, pid]));

interface RunResult {
  arm: Arm;
  pair: number;
  offered: number;
  accepted: number;
  delivered: number;
  lost: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** POST to its answer. */
  answerP50Ms: number;
  answerP99Ms: number;
  /** The answer to the message's arrival at the provider. */
  afterAnswerP50Ms: number;
  afterAnswerP99Ms: number;
  lastArrivalAfterStartS: number;
  /**
   * TAIL_TRACE: the p99 of the requests no collection pause of the MongoDB-wire server (a stand-in:
   * mongod has no collector) overlapped, and how many it did overlap.
   */
  p99MsOutsideStandInPauses?: number;
  requestsInStandInPauses?: number;
  /** CPU (user + system) each process spent per accepted OTP over the run and its drain. */
  cpuMsPerOtp: Record<string, number>;
}

async function collectArrivals(stub: ProviderStub, expected: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const deadline = Date.now() + DRAIN_TIMEOUT_S * 1000;
  while (seen.size < expected && Date.now() < deadline) {
    const { arrivals } = await stub.arrivals(true);
    for (const [to, at] of arrivals) if (!seen.has(to)) seen.set(to, at);
    if (seen.size < expected) await sleep(200);
  }
  return seen;
}

/** The project's measured requests of every pair, for TAIL_TRACE. */
const projectRequests: TimedRequest[] = [];

function summarize(
  arm: Arm,
  pair: number,
  sent: SentRequest[],
  arrivals: Map<string, number>,
  cpuMs: Record<string, number>,
  standInPauses?: GcEvent[],
): RunResult {
  const latencies: number[] = [];
  const outsidePauses: number[] = [];
  const answers: number[] = [];
  const afterAnswers: number[] = [];
  let accepted = 0;
  for (const s of sent) {
    if (s.status !== 200 || !s.otpUuid) continue;
    accepted += 1;
    const key = arm === 'project' ? benchMobile(s.index) : `otp-${s.otpUuid}-SMS`;
    const at = arrivals.get(key);
    if (s.answeredAt !== undefined) answers.push(s.answeredAt - s.scheduledAt);
    if (at === undefined) continue;
    latencies.push(at - s.scheduledAt);
    if (standInPauses && !overlapsAny(standInPauses, s.scheduledAt, at)) outsidePauses.push(at - s.scheduledAt);
    if (s.answeredAt !== undefined) afterAnswers.push(at - s.answeredAt);
    if (TAIL_TRACE && arm === 'project' && pair > 0 && s.answeredAt !== undefined)
      projectRequests.push({ scheduledAt: s.scheduledAt, answeredAt: s.answeredAt, arrivedAt: at });
  }
  const first = sent[0]?.scheduledAt ?? 0;
  return {
    arm,
    pair,
    offered: sent.length,
    accepted,
    delivered: latencies.length,
    lost: accepted - latencies.length,
    p50Ms: round(percentile(latencies, 50), 1),
    p90Ms: round(percentile(latencies, 90), 1),
    p99Ms: round(percentile(latencies, 99), 1),
    maxMs: round(Math.max(...latencies), 1),
    answerP50Ms: round(percentile(answers, 50), 1),
    answerP99Ms: round(percentile(answers, 99), 1),
    afterAnswerP50Ms: round(percentile(afterAnswers, 50), 1),
    afterAnswerP99Ms: round(percentile(afterAnswers, 99), 1),
    lastArrivalAfterStartS: round((Math.max(...arrivals.values()) - first) / 1000, 2),
    cpuMsPerOtp: Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, round(ms / Math.max(1, accepted), 3)])),
    ...(standInPauses
      ? {
          p99MsOutsideStandInPauses: round(percentile(outsidePauses, 99), 1),
          requestsInStandInPauses: latencies.length - outsidePauses.length,
        }
      : {}),
  };
}

await runBenchmark('otp-e2e', async (cleanup) => {
  const started = new Date();
  const gcDir = join(projectRoot, '.local', 'bench-logs', `gc-timeline-${process.pid}`);
  if (TAIL_TRACE) mkdirSync(gcDir, { recursive: true });
  const mongoGcLog = join(gcDir, 'mongo-gc.log');
  const infra = await startInfra({ jvmOptions: [...MONGO_JVM_OPTIONS, ...(TAIL_TRACE ? [`-Xlog:gc:file=${mongoGcLog}:time`] : [])] });
  cleanup(infra.stop);
  const stub = await startProviderStub(envInt('STUB_DELAY_MS', 0));
  cleanup(stub.stop);
  const env = projectEnv(storesOf(infra), 'bench_e2e_project', 'bep', stub.url);
  const flagsOf = (entry: string) => (PROCFILE_FLAGS ? (readProcfile().find((line) => line.entry === entry)?.flags ?? []) : []);
  // API_NODE_FLAGS, WORKER_NODE_FLAGS: more Node or V8 flags for the API and the dispatch worker
  // (e.g. `--trace-gc-nvp`, whose lines go to each process's log).
  const extraFlags = (name: string) => envString(name, '').split(' ').filter(Boolean);
  const gcTimeline = pathToFileURL(join(distDir, 'bench', 'support', 'gc-timeline.js')).href;
  const traced = (name: string): { env: Record<string, string>; flags: string[] } =>
    TAIL_TRACE
      ? {
          env: { GC_TIMELINE_FILE: join(gcDir, `${name}.jsonl`), GC_TIMELINE_STALLS: envString('TAIL_TRACE_STALLS', '1') },
          flags: ['--import', gcTimeline],
        }
      : { env: {}, flags: [] };
  const apiFlags = [...flagsOf('dist/api/main.js'), ...extraFlags('API_NODE_FLAGS')];
  const workerFlags = [...flagsOf('dist/workers/dispatch/main.js'), ...extraFlags('WORKER_NODE_FLAGS')];
  const api = await startProjectApi({ ...env, ...traced('api').env }, [...apiFlags, ...traced('api').flags]);
  cleanup(api.stop);
  const worker = await startProjectWorker({ ...env, DISPATCH_CONCURRENCY: String(CONCURRENCY), ...traced('worker').env }, [
    ...workerFlags,
    ...traced('worker').flags,
  ]);
  cleanup(worker.stop);
  const baseline = await startBaselineApp(storesOf(infra), BASELINE_DB, 'beb');
  cleanup(baseline.stop);
  const requiredWork = BASELINE_WORK === 'required';
  const bare = requiredWork
    ? await startBareWorker(infra.redis.url, 'beb', stub.url, CONCURRENCY, `${storesOf(infra).mongo}/${BASELINE_DB}`, 'baseline_deliveries')
    : await startBareWorker(infra.redis.url, 'beb', stub.url, CONCURRENCY);
  cleanup(bare.stop);

  // Half the baseline's maximum accept rate, measured here with its bare worker running, after
  // a discarded run of the same length (the JVM of the MongoDB-wire server and V8 warm up).
  let baselineMax: number | undefined;
  if (FIXED_RATE === 0) {
    await autocannonPost(`${baseline.url}/v1/svc-otp`, otpRequestBody(benchUserId(0)), {}, MAX_PROBE_S, CONNECTIONS);
    const probe = await autocannonPost(`${baseline.url}/v1/svc-otp`, otpRequestBody(benchUserId(0)), {}, MAX_PROBE_S, CONNECTIONS);
    baselineMax = probe.requestsPerSecond;
  }
  const rate = FIXED_RATE > 0 ? FIXED_RATE : Math.max(1, Math.floor((baselineMax ?? 0) / 2));
  await sleep(2000);
  await stub.arrivals(true);

  const perRun = Math.floor(rate * Math.max(DURATION_S, WARMUP_S));
  const mongo = await connectMongo(`${infra.mongo.url}/bench_e2e_project`);
  await insertBenchUsers(mongo, perRun);
  const token = await projectAccessToken(api.url, mongo);
  const projectDb = mongo;
  cleanup(() => projectDb.close());
  const baselineDb = await connectMongo(`${infra.mongo.url}/${BASELINE_DB}`);
  cleanup(() => baselineDb.close());
  if (requiredWork) await insertBaselineUsers(baselineDb, perRun);

  console.log(
    `otp-e2e (baseline work ${BASELINE_WORK}): baseline max ${baselineMax === undefined ? 'not measured' : `${round(baselineMax, 1)} req/s`}, offered rate ${rate} req/s for ${DURATION_S} s per run, ${PAIRS} pairs, worker concurrency ${CONCURRENCY}`,
  );
  const targets: Record<Arm, { url: string; headers: Record<string, string> }> = {
    project: { url: `${api.url}/v1/svc-otp`, headers: { authorization: `Bearer ${token}` } },
    baseline: { url: `${baseline.url}/v1/svc-otp`, headers: {} },
  };
  // Each arm's own processes and the shared stores: what the run costs in CPU, and what each
  // process costs while nothing is offered (timers, polls), measured before the first run.
  const armPids: Record<Arm, Record<string, number | undefined>> = {
    project: { api: api.child.pid, worker: worker.child.pid, mongo: infra.mongo.pid, redis: infra.redis.pid },
    baseline: { app: baseline.child.pid, worker: bare.child.pid, mongo: infra.mongo.pid, redis: infra.redis.pid },
  };
  const idle = await withCpu({ ...prefixed('project', armPids.project), ...prefixed('baseline', armPids.baseline) }, () =>
    sleep(IDLE_S * 1000),
  );
  const idleCpuMsPerSecond = Object.fromEntries(Object.entries(idle.cpuMs).map(([name, ms]) => [name, round(ms / IDLE_S, 1)]));
  const runArm = async (arm: Arm, pair: number, seconds: number): Promise<RunResult> => {
    // mongo-java-server answers the worker's `{_id, state}` filters by scanning the collection;
    // real MongoDB uses the _id index. Every run starts with no delivery rows, so runs compare.
    if (arm === 'project') await projectDb.collection('deliveries').deleteMany({});
    else if (requiredWork) await baselineDb.collection('baseline_deliveries').deleteMany({});
    await stub.arrivals(true);
    const { value, cpuMs } = await withCpu(armPids[arm], async () => {
      const sent = await openLoopPost(targets[arm].url, targets[arm].headers, (i) => otpRequestBody(benchUserId(i)), rate, seconds);
      const accepted = sent.filter((s) => s.status === 200).length;
      return { sent, arrivals: await collectArrivals(stub, accepted) };
    });
    return summarize(arm, pair, value.sent, value.arrivals, cpuMs, TAIL_TRACE ? readJvmPauses(mongoGcLog) : undefined);
  };
  if (WARMUP_S > 0) {
    for (const arm of ['project', 'baseline'] as const) {
      const warm = await runArm(arm, 0, WARMUP_S);
      console.log(`  warm-up ${arm} (discarded): p50 ${warm.p50Ms} ms, p99 ${warm.p99Ms} ms`);
    }
  }
  const runs: RunResult[] = [];
  for (let pair = 1; pair <= PAIRS; pair++) {
    const order: Arm[] = pair % 2 === 1 ? ['project', 'baseline'] : ['baseline', 'project'];
    for (const arm of order) {
      const result = await runArm(arm, pair, DURATION_S);
      runs.push(result);
      console.log(
        `  pair ${pair} ${arm}: accepted ${result.accepted}/${result.offered}, delivered ${result.delivered}, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms (answer p50 ${result.answerP50Ms}, p99 ${result.answerP99Ms}; after the answer p50 ${result.afterAnswerP50Ms}, p99 ${result.afterAnswerP99Ms})`,
      );
      await sleep(1000);
    }
  }

  console.log('');
  printTable(
    ['pair', 'arm', 'offered', 'accepted', 'delivered', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'answer p50/p99', 'after answer p50/p99'],
    runs.map((r) => [
      r.pair,
      r.arm,
      r.offered,
      r.accepted,
      r.delivered,
      r.p50Ms,
      r.p90Ms,
      r.p99Ms,
      r.maxMs,
      `${r.answerP50Ms}/${r.answerP99Ms}`,
      `${r.afterAnswerP50Ms}/${r.afterAnswerP99Ms}`,
    ]),
  );
  const summary = (arm: Arm) => {
    const of = runs.filter((r) => r.arm === arm);
    const med = (pick: (r: RunResult) => number) => round(median(of.map(pick)), 1);
    return {
      p50MsMedianOfRuns: med((r) => r.p50Ms),
      p99MsMedianOfRuns: med((r) => r.p99Ms),
      answerP50MsMedianOfRuns: med((r) => r.answerP50Ms),
      answerP99MsMedianOfRuns: med((r) => r.answerP99Ms),
      afterAnswerP50MsMedianOfRuns: med((r) => r.afterAnswerP50Ms),
      afterAnswerP99MsMedianOfRuns: med((r) => r.afterAnswerP99Ms),
      cpuMsPerOtpMedianOfRuns: Object.fromEntries(
        Object.keys(of[0]?.cpuMsPerOtp ?? {}).map((name) => [name, round(median(of.map((r) => r.cpuMsPerOtp[name] ?? NaN)), 3)]),
      ),
    };
  };
  const p99Ratios = runs
    .filter((r) => r.arm === 'project')
    .map((p) => p.p99Ms / (runs.find((b) => b.arm === 'baseline' && b.pair === p.pair)?.p99Ms ?? NaN));
  // TAIL_TRACE: the same ratio over the requests the stand-in's pauses left alone, in both arms.
  const outsideRatios = runs
    .filter((r) => r.arm === 'project' && r.p99MsOutsideStandInPauses !== undefined)
    .map(
      (p) =>
        (p.p99MsOutsideStandInPauses ?? NaN) /
        (runs.find((b) => b.arm === 'baseline' && b.pair === p.pair)?.p99MsOutsideStandInPauses ?? NaN),
    );
  const result = {
    project: summary('project'),
    baseline: summary('baseline'),
    idleCpuMsPerSecond,
    p99RatioMedianOfPairs: round(median(p99Ratios), 2),
    p99RatiosByPair: p99Ratios.map((r) => round(r, 2)),
    ...(outsideRatios.length > 0
      ? {
          p99RatioOutsideStandInPausesMedianOfPairs: round(median(outsideRatios), 2),
          p99RatiosOutsideStandInPausesByPair: outsideRatios.map((r) => round(r, 2)),
        }
      : {}),
  };
  console.log(`\nproject:  p50 ${result.project.p50MsMedianOfRuns} ms, p99 ${result.project.p99MsMedianOfRuns} ms (median over runs)`);
  console.log(`baseline: p50 ${result.baseline.p50MsMedianOfRuns} ms, p99 ${result.baseline.p99MsMedianOfRuns} ms (median over runs)`);
  console.log(
    `CPU ms per OTP (median over runs): project ${JSON.stringify(result.project.cpuMsPerOtpMedianOfRuns)}, baseline ${JSON.stringify(result.baseline.cpuMsPerOtpMedianOfRuns)}`,
  );
  console.log(`CPU ms per second with nothing offered: ${JSON.stringify(idleCpuMsPerSecond)}`);
  console.log(`p99 project/baseline: median of pairs ${result.p99RatioMedianOfPairs} (${result.p99RatiosByPair.join(' ')}; goal <= 1.5)`);
  if (result.p99RatiosOutsideStandInPausesByPair)
    console.log(
      `  over the requests no pause of the MongoDB-wire server's JVM overlapped: median of pairs ${result.p99RatioOutsideStandInPausesMedianOfPairs} (${result.p99RatiosOutsideStandInPausesByPair.join(' ')})`,
    );
  const tail = TAIL_TRACE
    ? attributeTail(
        projectRequests,
        readGcTimeline(join(gcDir, 'api.jsonl')),
        readGcTimeline(join(gcDir, 'worker.jsonl')),
        readJvmPauses(mongoGcLog),
      )
    : undefined;
  if (tail) console.log(`\ncollections and stalls overlapping the project's requests (TAIL_TRACE):\n${JSON.stringify(tail, null, 2)}`);

  const file = writeResult('otp-e2e', {
    benchmark: 'otp-e2e',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    method: {
      offeredRatePerSecond: rate,
      baselineMaxRequestsPerSecond: baselineMax === undefined ? null : round(baselineMax, 1),
      rateRule:
        FIXED_RATE > 0
          ? 'RATE given'
          : `half the baseline app's autocannon maximum (${MAX_PROBE_S} s, ${CONNECTIONS} connections, bare worker running)`,
      durationSecondsPerRun: DURATION_S,
      warmupSecondsPerArm: WARMUP_S,
      pairs: PAIRS,
      baselineWork: BASELINE_WORK,
      mongoServerJvmOptions: MONGO_JVM_OPTIONS.join(' ') || "the launcher's",
      projectNodeFlags: PROCFILE_FLAGS ? { api: apiFlags.join(' '), dispatchWorker: workerFlags.join(' ') } : "Node's defaults",
      interleaving: 'pairs alternate which arm runs first',
      load: 'open loop: request i due at start + i/rate, latency from that instant (no coordinated omission); 64 keep-alive sockets',
      latency: 'wall clock at the stub receiving the Twilio Messages POST minus the scheduled send instant',
      workerConcurrency: CONCURRENCY,
      deliveriesCollection: 'emptied before each project run (mongo-java-server scans on {_id, state} filters)',
      stubDelayMs: envInt('STUB_DELAY_MS', 0),
      projectLogLevel: envString('BENCH_LOG_LEVEL', 'info'),
    },
    runs,
    summary: result,
    ...(tail ? { tail } : {}),
  });
  console.log(`result written to ${file}`);
});
