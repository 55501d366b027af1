// bench/activation-timing: does POST /v1/users/activate tell, by its timing, whether a userId
// exists? PAIRS interleaved pairs (order within each pair random) of one wrong code for a pending
// user and one for an unknown userId of the same length, each user tried once (so the throttle
// never answers instead of the check), against the real API process. Reports means, medians and
// percentiles per arm, the Mann-Whitney U test over the two samples and a sign test over the pairs.
import { randomInt } from 'node:crypto';
import { registerBenchClient } from '../support/bench-clients.js';
import { envInt, machineInfo, median, printTable, round, runBenchmark, startInfra, writeResult } from '../support/bench-kit.js';
import { connectMongo, projectEnv, startProjectApi, storesOf } from '../support/arms.js';
import { mannWhitney, mean, signTest, summary } from '../support/timing-stats.js';

const PAIRS = envInt('PAIRS', 200);
const WARMUP = envInt('WARMUP_PAIRS', 50);

await runBenchmark('activation-timing', async (cleanup) => {
  const started = new Date();
  const infra = await startInfra();
  cleanup(infra.stop);
  // The per-address request budget would otherwise answer 429 before the check; the per-user
  // throttle never bites because each user is tried once.
  const env: Record<string, string> = { ...projectEnv(storesOf(infra), 'bench_activation', 'bact'), RATE_LIMIT_ACTIVATE_PER_IP: '1000000' };
  const api = await startProjectApi(env);
  cleanup(api.stop);

  const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}`, 'content-type': 'application/json' };
  await fetch(`${api.url}/admin/groups`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'retail' }) });
  const mongo = await connectMongo(`${infra.mongo.url}/bench_activation`);
  const { client, clientSecret } = await registerBenchClient(mongo, {
    name: 'bench users',
    scopes: ['users'],
    allowedIps: ['127.0.0.1/32', '::1/128'],
  });
  await mongo.close();
  const tokenRes = await fetch(`${api.url}/svc/authserver/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.clientId}:${clientSecret ?? ''}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;

  const total = WARMUP + PAIRS;
  const known = (i: number) => `pending-${String(i).padStart(5, '0')}`;
  const unknown = (i: number) => `missing-${String(i).padStart(5, '0')}`;
  for (let i = 0; i < total; i++) {
    const res = await fetch(`${api.url}/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: known(i), primaryGroup: 'retail', firstName: 'B', lastName: 'U', predefinedCode: 'RIGHT-CODE' }),
    });
    if (res.status !== 201) throw new Error(`enroll ${known(i)}: ${res.status} ${await res.text()}`);
  }

  const activate = async (userId: string): Promise<number> => {
    const t0 = performance.now();
    const res = await fetch(`${api.url}/v1/users/activate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId, activationCode: 'WRONG-CODE' }),
    });
    await res.arrayBuffer();
    const elapsed = performance.now() - t0;
    if (res.status !== 422) throw new Error(`activate ${userId}: ${res.status}`);
    return elapsed;
  };

  const knownMs: number[] = [];
  const unknownMs: number[] = [];
  for (let i = 0; i < total; i++) {
    let k: number;
    let u: number;
    if (randomInt(2) === 0) {
      k = await activate(known(i));
      u = await activate(unknown(i));
    } else {
      u = await activate(unknown(i));
      k = await activate(known(i));
    }
    if (i >= WARMUP) {
      knownMs.push(k);
      unknownMs.push(u);
    }
  }

  const mw = mannWhitney(knownMs, unknownMs);
  const paired = signTest(knownMs.map((k, i) => k - unknownMs[i]));
  const sign = { knownSlower: paired.firstSlower, unknownSlower: paired.secondSlower, p: paired.p };
  const result = {
    benchmark: 'activation-timing',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    pairs: PAIRS,
    warmupPairs: WARMUP,
    knownPendingUserMs: summary(knownMs),
    unknownUserMs: summary(unknownMs),
    meanDifferenceMs: round(mean(knownMs) - mean(unknownMs), 3),
    medianDifferenceMs: round(median(knownMs) - median(unknownMs), 3),
    mannWhitney: { u: mw.u, z: round(mw.z, 3), p: round(mw.p, 4) },
    signTest: { ...sign, p: round(sign.p, 4) },
  };
  printTable(
    ['arm', 'mean ms', 'median ms', 'p10 ms', 'p90 ms'],
    [
      [
        'pending user, wrong code',
        result.knownPendingUserMs.mean,
        result.knownPendingUserMs.median,
        result.knownPendingUserMs.p10,
        result.knownPendingUserMs.p90,
      ],
      ['unknown user', result.unknownUserMs.mean, result.unknownUserMs.median, result.unknownUserMs.p10, result.unknownUserMs.p90],
    ],
  );
  console.log(
    `Mann-Whitney U=${mw.u} z=${result.mannWhitney.z} p=${result.mannWhitney.p}; sign test: known slower in ${sign.knownSlower}, unknown slower in ${sign.unknownSlower} pairs, p=${result.signTest.p}`,
  );
  console.log(`written to ${writeResult('activation-timing', result)}`);
});
