// bench/enterprise-fairness: does one enterprise's burst delay another's OTPs? Enterprise B sends a
// steady open-loop trickle of OTPs (RATE_B per second for DURATION_S) through the real API; in the
// `burst` arm enterprise A posts BURST OTPs as fast as the API takes them at the same instant B
// starts, in the `alone` arm B is alone. The figure is B's latency from the scheduled POST to the
// provider stub receiving its SMS (p50/p99), burst against alone in the same invocation, pairs
// alternating which arm runs first. Users of A and B have numbers of different prefixes, so the
// stub's `To` tells whose message arrived. With A_SENDS=enrollments, A's burst is BURST
// enrollments of new users with mobile numbers instead (each sends an activation code by SMS,
// through the enrollment worker and then the dispatch worker), while B still sends OTPs: does a
// bulk enrollment delay another enterprise's login codes?
import { Redis } from 'ioredis';
import { loadConfig } from '../../core/platform/config/config.js';
import { createBudget } from '../../core/platform/throttling/budget.js';
import { openLoopPost, type SentRequest } from '../support/open-loop.js';
import {
  envInt,
  envString,
  machineInfo,
  median,
  percentile,
  printTable,
  round,
  runBenchmark,
  sleep,
  startInfra,
  writeResult,
} from '../support/bench-kit.js';
import {
  benchMobile,
  benchUserId,
  connectMongo,
  enrollmentRequestBody,
  insertBenchUsers,
  otpRequestBody,
  projectAccessToken,
  projectEnv,
  startProjectApi,
  startProjectEnrollmentWorker,
  startProjectWorker,
  startProviderStub,
  storesOf,
  type ProviderStub,
} from '../support/arms.js';
import { createBenchGroup } from '../support/bench-groups.js';

const PAIRS = envInt('PAIRS', 2);
const BURST = envInt('BURST', 2000);
const RATE_B = envInt('RATE_B', 5);
const DURATION_S = envInt('DURATION_S', 10);
const CONCURRENCY = envInt('CONCURRENCY', 10);
const DRAIN_TIMEOUT_S = envInt('DRAIN_TIMEOUT_S', 300);
/** DISPATCH_FAIR_SHARE of the API (0: strict first-come-first-served), which projectEnv passes on; the project's default otherwise. */
const FAIR_SHARE = process.env.DISPATCH_FAIR_SHARE;
/** What A's burst sends: OTPs (POST /v1/svc-otp), or enrollments that send activation codes by SMS (POST /v1/users). */
const A_SENDS = envString('A_SENDS', 'otps');
if (A_SENDS !== 'otps' && A_SENDS !== 'enrollments') throw new Error(`A_SENDS must be otps or enrollments, got '${A_SENDS}'`);
/** A's burst is offered at this rate (open loop, 64 sockets): far above what the API accepts. */
const BURST_RATE = 5000;

const ENTERPRISE_A = 'bench-noisy';
const ENTERPRISE_B = 'bench-quiet';
/** B's numbers start +1556, A's +1555 (benchMobile). */
const mobileOfB = (i: number) => `+1556${String(i).padStart(7, '0')}`;

type Arm = 'alone' | 'burst';

interface RunResult {
  arm: Arm;
  pair: number;
  bSent: number;
  bDelivered: number;
  bP50Ms: number;
  bP90Ms: number;
  bP99Ms: number;
  bMaxMs: number;
  /** POST to its answer: the part of B's latency the API adds (A's burst also takes the API's CPU). */
  bAnswerP50Ms: number;
  bAnswerP99Ms: number;
  aAccepted: number;
  aDelivered: number;
  /**
   * Enrollments: what A's enrollment budget (RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE) counted
   * in its window after the burst. The fair share acts on this count, so it must grow with the
   * burst although the benchmark's limits are too large to refuse anything.
   */
  aEnrollmentsCountedInWindow?: number;
  /** From the burst's first POST to A's last message at the stub. */
  aDrainS: number;
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

const acceptedOtps = (sent: SentRequest[]) => sent.filter((s) => s.status === 200 && s.otpUuid);

/** One burst of A: where it posts, request i's body, and the number request i's message goes to. */
interface BurstOfA {
  url: string;
  bodyOf: (i: number) => unknown;
  mobileOf: (i: number) => string;
  accepted: (sent: SentRequest[]) => SentRequest[];
}

await runBenchmark('enterprise-fairness', async (cleanup) => {
  const started = new Date();
  const infra = await startInfra();
  cleanup(infra.stop);
  const stub = await startProviderStub(envInt('STUB_DELAY_MS', 0));
  cleanup(stub.stop);
  const env = projectEnv(storesOf(infra), 'bench_fairness', 'bfa', stub.url);
  const api = await startProjectApi(env);
  cleanup(api.stop);
  const worker = await startProjectWorker({ ...env, DISPATCH_CONCURRENCY: String(CONCURRENCY) });
  cleanup(worker.stop);
  // The settings the project's processes run with (the fair share, the enrollment worker's slots).
  const config = loadConfig({ ...env, PUBLIC_URL: api.url });
  if (A_SENDS === 'enrollments') {
    const enrollmentWorker = await startProjectEnrollmentWorker(env);
    cleanup(enrollmentWorker.stop);
  }

  const mongo = await connectMongo(`${infra.mongo.url}/bench_fairness`);
  cleanup(() => mongo.close());
  const bCount = RATE_B * DURATION_S;
  if (A_SENDS === 'otps') await insertBenchUsers(mongo, BURST, ENTERPRISE_A, benchMobile);
  else await createBenchGroup(mongo, 'retail');
  await insertBenchUsers(mongo, bCount, ENTERPRISE_B, mobileOfB);
  const tokenA = await projectAccessToken(api.url, mongo, ENTERPRISE_A, [A_SENDS === 'otps' ? 'otp' : 'users']);
  const tokenB = await projectAccessToken(api.url, mongo, ENTERPRISE_B);
  const otpUrl = `${api.url}/v1/svc-otp`;
  console.log(
    `enterprise-fairness: A sends ${A_SENDS}, DISPATCH_FAIR_SHARE ${config.dispatchFairShare}; B ${RATE_B}/s for ${DURATION_S} s, A's burst ${BURST} ${A_SENDS} at B's start, ${PAIRS} pairs, dispatch worker concurrency ${CONCURRENCY}${A_SENDS === 'enrollments' ? `, enrollment worker concurrency ${config.concurrency.enrollment}` : ''}`,
  );

  // Every burst enrolls users of its own: a userId or a live mobile number enrolled before is a 409,
  // and a job id BullMQ has seen is not queued again.
  let bursts = 0;
  const burstOfA = (): BurstOfA => {
    if (A_SENDS === 'otps')
      return { url: otpUrl, bodyOf: (i) => otpRequestBody(benchUserId(i)), mobileOf: benchMobile, accepted: acceptedOtps };
    const first = bursts++ * BURST;
    return {
      url: `${api.url}/v1/users`,
      bodyOf: (i) => enrollmentRequestBody(`bench-enrollee-${first + i}`, benchMobile(first + i)),
      mobileOf: (i) => benchMobile(first + i),
      accepted: (sent) => sent.filter((s) => s.status === 201),
    };
  };
  // The enrollment budget as the API keeps it in Redis, read (never taken) after each burst.
  const redis = new Redis(infra.redis.url, { maxRetriesPerRequest: null });
  cleanup(() => redis.quit());
  const enrollmentBudget = createBudget(redis, config.queuePrefix, {
    name: 'enrollmentMessagesPerEnterprise',
    ...config.rateLimits.enrollmentMessagesPerEnterprise,
  });

  const runArm = async (arm: Arm, pair: number): Promise<RunResult> => {
    await mongo.collection('deliveries').deleteMany({});
    await stub.arrivals(true);
    const a = arm === 'burst' ? burstOfA() : undefined;
    const burst = a
      ? openLoopPost(a.url, { authorization: `Bearer ${tokenA}` }, a.bodyOf, BURST_RATE, BURST / BURST_RATE)
      : Promise.resolve([]);
    const trickle = openLoopPost(otpUrl, { authorization: `Bearer ${tokenB}` }, (i) => otpRequestBody(benchUserId(i)), RATE_B, DURATION_S);
    const [aSent, bSent] = await Promise.all([burst, trickle]);
    const aOk = a ? a.accepted(aSent) : [];
    const bOk = acceptedOtps(bSent);
    const arrivals = await collectArrivals(stub, aOk.length + bOk.length);
    const bLatencies = bOk.flatMap((s) => {
      const at = arrivals.get(mobileOfB(s.index));
      return at === undefined ? [] : [at - s.scheduledAt];
    });
    const aArrivals = aOk.flatMap((s) => {
      const at = a ? arrivals.get(a.mobileOf(s.index)) : undefined;
      return at === undefined ? [] : [at];
    });
    const bAnswers = bOk.flatMap((s) => (s.answeredAt === undefined ? [] : [s.answeredAt - s.scheduledAt]));
    const aStart = aSent[0]?.scheduledAt ?? NaN;
    return {
      arm,
      pair,
      bSent: bSent.length,
      bDelivered: bLatencies.length,
      bP50Ms: round(percentile(bLatencies, 50), 1),
      bP90Ms: round(percentile(bLatencies, 90), 1),
      bP99Ms: round(percentile(bLatencies, 99), 1),
      bMaxMs: round(Math.max(...bLatencies), 1),
      bAnswerP50Ms: round(percentile(bAnswers, 50), 1),
      bAnswerP99Ms: round(percentile(bAnswers, 99), 1),
      aAccepted: aOk.length,
      aDelivered: aArrivals.length,
      aDrainS: aArrivals.length ? round((Math.max(...aArrivals) - aStart) / 1000, 2) : 0,
      ...(A_SENDS === 'enrollments' && arm === 'burst' ? { aEnrollmentsCountedInWindow: await enrollmentBudget.peek(ENTERPRISE_A) } : {}),
    };
  };

  // A discarded warm-up of each arm (the JVM of the MongoDB-wire server and V8).
  for (const arm of ['alone', 'burst'] as const) {
    const warm = await runArm(arm, 0);
    console.log(`  warm-up ${arm} (discarded): B p50 ${warm.bP50Ms} ms, p99 ${warm.bP99Ms} ms`);
  }
  const runs: RunResult[] = [];
  for (let pair = 1; pair <= PAIRS; pair++) {
    const order: Arm[] = pair % 2 === 1 ? ['alone', 'burst'] : ['burst', 'alone'];
    for (const arm of order) {
      const r = await runArm(arm, pair);
      runs.push(r);
      console.log(
        `  pair ${pair} ${arm}: B delivered ${r.bDelivered}/${r.bSent}, p50 ${r.bP50Ms} ms, p99 ${r.bP99Ms} ms (answer p50 ${r.bAnswerP50Ms}, p99 ${r.bAnswerP99Ms}); A delivered ${r.aDelivered}/${r.aAccepted} in ${r.aDrainS} s${r.aEnrollmentsCountedInWindow === undefined ? '' : `, A's enrollment budget counted ${r.aEnrollmentsCountedInWindow}`}`,
      );
      await sleep(1000);
    }
  }
  console.log('');
  printTable(
    [
      'pair',
      'arm',
      'B sent',
      'B delivered',
      'B p50 ms',
      'B p90 ms',
      'B p99 ms',
      'B max ms',
      'B answer p50/p99',
      'A accepted',
      'A delivered',
      'A drain s',
    ],
    runs.map((r) => [
      r.pair,
      r.arm,
      r.bSent,
      r.bDelivered,
      r.bP50Ms,
      r.bP90Ms,
      r.bP99Ms,
      r.bMaxMs,
      `${r.bAnswerP50Ms}/${r.bAnswerP99Ms}`,
      r.aAccepted,
      r.aDelivered,
      r.aDrainS,
    ]),
  );
  const p99Ratios = runs
    .filter((r) => r.arm === 'burst')
    .map((b) => b.bP99Ms / (runs.find((a) => a.arm === 'alone' && a.pair === b.pair)?.bP99Ms ?? NaN));
  const med = (arm: Arm, pick: (r: RunResult) => number) => round(median(runs.filter((r) => r.arm === arm).map(pick)), 1);
  const summary = {
    alone: {
      bP50MsMedianOfRuns: med('alone', (r) => r.bP50Ms),
      bP99MsMedianOfRuns: med('alone', (r) => r.bP99Ms),
      bAnswerP99MsMedianOfRuns: med('alone', (r) => r.bAnswerP99Ms),
    },
    burst: {
      bP50MsMedianOfRuns: med('burst', (r) => r.bP50Ms),
      bP99MsMedianOfRuns: med('burst', (r) => r.bP99Ms),
      bAnswerP99MsMedianOfRuns: med('burst', (r) => r.bAnswerP99Ms),
      aDrainSMedianOfRuns: med('burst', (r) => r.aDrainS),
    },
    bP99RatioBurstOverAloneMedianOfPairs: round(median(p99Ratios), 2),
    bP99RatiosByPair: p99Ratios.map((r) => round(r, 2)),
  };
  console.log(`\nB alone: p50 ${summary.alone.bP50MsMedianOfRuns} ms, p99 ${summary.alone.bP99MsMedianOfRuns} ms (median over runs)`);
  console.log(
    `B during A's burst: p50 ${summary.burst.bP50MsMedianOfRuns} ms, p99 ${summary.burst.bP99MsMedianOfRuns} ms; A drained in ${summary.burst.aDrainSMedianOfRuns} s`,
  );
  console.log(`B p99 burst/alone: median of pairs ${summary.bP99RatioBurstOverAloneMedianOfPairs} (${summary.bP99RatiosByPair.join(' ')})`);
  const file = writeResult('enterprise-fairness', {
    benchmark: 'enterprise-fairness',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    method: {
      aSends: A_SENDS,
      burst: BURST,
      burstOfferedRatePerSecond: BURST_RATE,
      rateB: RATE_B,
      durationSecondsPerRun: DURATION_S,
      pairs: PAIRS,
      interleaving: 'pairs alternate which arm runs first; one discarded warm-up of each arm',
      latency: "wall clock at the stub receiving B's Twilio Messages POST minus its scheduled send instant",
      workerConcurrency: CONCURRENCY,
      dispatchFairShare: config.dispatchFairShare,
      dispatchFairShareFrom: FAIR_SHARE === undefined ? "the project's default" : 'DISPATCH_FAIR_SHARE',
      ...(A_SENDS === 'enrollments' ? { enrollmentWorkerConcurrency: config.concurrency.enrollment } : {}),
      stubDelayMs: envInt('STUB_DELAY_MS', 0),
    },
    runs,
    summary,
  });
  console.log(`result written to ${file}`);
});
