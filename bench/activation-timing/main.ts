// bench/activation-timing: does POST /v1/users/activate tell, by its timing, whether a userId
// exists? PAIRS interleaved pairs (order within each pair random) of one wrong code for a pending
// user and one for an unknown userId of the same length, each user tried once (so the throttle
// never answers instead of the check), against the real API process. Reports means, medians and
// percentiles per arm, the Mann-Whitney U test over the two samples and a sign test over the pairs.
import { randomInt } from 'node:crypto';
import { registerClient } from '../../core/clients/clients.service.js';
import { envInt, machineInfo, median, percentile, printTable, round, runBenchmark, startInfra, writeResult } from '../support/bench-kit.js';
import { connectMongo, projectEnv, startProjectApi, storesOf } from '../support/arms.js';

const PAIRS = envInt('PAIRS', 200);
const WARMUP = envInt('WARMUP_PAIRS', 50);

/** Standard normal CDF (Abramowitz-Stegun 7.1.26 erf), enough for a p-value. */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.3275911 * (Math.abs(z) / Math.SQRT2));
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-(z * z) / 2);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** Two-sided Mann-Whitney U (normal approximation with tie correction). */
function mannWhitney(a: number[], b: number[]): { u: number; z: number; p: number } {
  const all = [...a.map((v) => ({ v, g: 0 })), ...b.map((v) => ({ v, g: 1 }))].sort((x, y) => x.v - y.v);
  const ranks = new Array<number>(all.length);
  let tieTerm = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1].v === all[i].v) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[k] = rank;
    const t = j - i + 1;
    tieTerm += t ** 3 - t;
    i = j + 1;
  }
  const rankSumA = all.reduce((sum, x, i) => (x.g === 0 ? sum + ranks[i] : sum), 0);
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const n = n1 + n2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  const z = (u - (n1 * n2) / 2) / sigma;
  return { u, z, p: 2 * (1 - normalCdf(Math.abs(z))) };
}

/** Two-sided sign test over paired differences (normal approximation). */
function signTest(diffs: number[]): { knownSlower: number; unknownSlower: number; p: number } {
  const knownSlower = diffs.filter((d) => d > 0).length;
  const unknownSlower = diffs.filter((d) => d < 0).length;
  const n = knownSlower + unknownSlower;
  const z = (knownSlower - n / 2) / Math.sqrt(n / 4);
  return { knownSlower, unknownSlower, p: 2 * (1 - normalCdf(Math.abs(z))) };
}

const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
const summary = (v: number[]) => ({
  mean: round(mean(v), 3),
  median: round(median(v), 3),
  p10: round(percentile(v, 10), 3),
  p90: round(percentile(v, 90), 3),
});

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
  const { client, clientSecret } = await registerClient(mongo, {
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
  const sign = signTest(knownMs.map((k, i) => k - unknownMs[i]));
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
