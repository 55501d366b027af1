// bench/roundtrips: what one OTP costs in store round trips, counted on the wire by loopback
// proxies in front of MongoDB and Redis (one pair of proxies per process): K sequential
// POST /v1/svc-otp each delivered through the dispatch worker to the provider stub, for the
// project and for the baseline (app + bare worker). An idle window of the same length, with the
// same processes, is subtracted so heartbeats and worker polling do not count as per-OTP work.
import { envInt, machineInfo, printTable, round, runBenchmark, sleep, startInfra, wallMs, writeResult } from '../support/bench-kit.js';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy.js';
import {
  benchUserId,
  connectMongo,
  insertBenchUsers,
  otpRequestBody,
  projectAccessToken,
  projectEnv,
  startBareWorker,
  startBaselineApp,
  startProjectApi,
  startProjectWorker,
  startProviderStub,
} from '../support/arms.js';

const K = envInt('REQUESTS', 200);

type Counts = Record<string, number>;

await runBenchmark('roundtrips', async (cleanup) => {
  const started = new Date();
  const infra = await startInfra();
  cleanup(infra.stop);
  const stub = await startProviderStub();
  cleanup(stub.stop);
  const proxy = async (protocol: 'mongo' | 'redis') => {
    const p = await startCountingProxy(protocol, protocol === 'mongo' ? infra.mongo.port : infra.redis.port);
    cleanup(p.close);
    return p;
  };
  const proxies = {
    'project API': { mongo: await proxy('mongo'), redis: await proxy('redis') },
    'project worker': { mongo: await proxy('mongo'), redis: await proxy('redis') },
    'baseline app': { mongo: await proxy('mongo'), redis: await proxy('redis') },
    'bare worker': { redis: await proxy('redis') },
  } satisfies Record<string, { mongo?: CountingProxy; redis: CountingProxy }>;
  const all = Object.values(proxies).flatMap((p) => Object.values(p) as CountingProxy[]);

  const apiEnv = projectEnv(
    { mongo: proxies['project API'].mongo.url, redis: proxies['project API'].redis.url },
    'bench_rt_project',
    'brp',
    stub.url,
  );
  const api = await startProjectApi(apiEnv);
  cleanup(api.stop);
  const worker = await startProjectWorker({
    ...apiEnv,
    MONGODB_URI: `${proxies['project worker'].mongo.url}/bench_rt_project`,
    REDIS_URL: proxies['project worker'].redis.url,
  });
  cleanup(worker.stop);
  const baseline = await startBaselineApp(
    { mongo: proxies['baseline app'].mongo.url, redis: proxies['baseline app'].redis.url },
    'bench_rt_baseline',
    'brb',
  );
  cleanup(baseline.stop);
  const bare = await startBareWorker(proxies['bare worker'].redis.url, 'brb', stub.url, 10);
  cleanup(bare.stop);

  const mongo = await connectMongo(`${infra.mongo.url}/bench_rt_project`);
  await insertBenchUsers(mongo, 1);
  const token = await projectAccessToken(api.url, mongo);
  await mongo.close();

  const post = async (url: string, headers: Record<string, string>) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(otpRequestBody(benchUserId(0))),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  };
  /** K sequential OTPs through one arm, until the stub has them all; returns the elapsed ms. */
  const runArm = async (url: string, headers: Record<string, string>) => {
    await stub.arrivals(true);
    const t0 = wallMs();
    for (let i = 0; i < K; i++) await post(url, headers);
    for (let seen = 0; seen < K;) {
      seen += (await stub.arrivals(true)).arrivals.length;
      if (seen < K) await sleep(20);
    }
    return wallMs() - t0;
  };
  const snapshot = () =>
    Object.fromEntries(
      Object.entries(proxies).map(([name, p]) => [
        name,
        Object.fromEntries(Object.entries(p).map(([kind, proxyOf]) => [kind, (proxyOf as CountingProxy).counts()])),
      ]),
    ) as Record<string, Record<string, Counts>>;
  const resetAll = () => all.forEach((p) => p.reset());

  // Warm both arms (first-use index builds, script loading), then measure each, then idle.
  await runArm(`${api.url}/v1/svc-otp`, { authorization: `Bearer ${token}` });
  await runArm(`${baseline.url}/v1/svc-otp`, {});
  await sleep(1000);
  resetAll();
  const projectMs = await runArm(`${api.url}/v1/svc-otp`, { authorization: `Bearer ${token}` });
  const afterProject = snapshot();
  resetAll();
  const baselineMs = await runArm(`${baseline.url}/v1/svc-otp`, {});
  const afterBaseline = snapshot();
  resetAll();
  await sleep(Math.max(projectMs, baselineMs));
  const idle = snapshot();
  const idleMs = Math.max(projectMs, baselineMs);

  const perRequest = (active: Record<string, Record<string, Counts>>, ms: number, processes: string[]) => {
    const out: Record<string, Record<string, Counts & { total: number }>> = {};
    for (const proc of processes) {
      out[proc] = {};
      for (const [kind, counts] of Object.entries(active[proc])) {
        const row: Counts = {};
        let total = 0;
        for (const [name, n] of Object.entries(counts)) {
          const background = ((idle[proc]?.[kind]?.[name] ?? 0) * ms) / idleMs;
          const value = round(Math.max(0, n - background) / K, 2);
          if (value > 0) row[name] = value;
          total += value;
        }
        out[proc][kind] = { ...row, total: round(total, 2) };
      }
    }
    return out;
  };
  const project = perRequest(afterProject, projectMs, ['project API', 'project worker']);
  const base = perRequest(afterBaseline, baselineMs, ['baseline app', 'bare worker']);

  const rows: (string | number)[][] = [];
  for (const [proc, kinds] of Object.entries({ ...project, ...base })) {
    for (const [kind, counts] of Object.entries(kinds)) {
      const { total, ...byName } = counts;
      rows.push([
        proc,
        kind,
        total,
        Object.entries(byName)
          .sort((a, b) => b[1] - a[1])
          .map(([n, v]) => `${n} ${v}`)
          .join(', '),
      ]);
    }
  }
  console.log(`roundtrips: ${K} sequential OTPs per arm, each delivered to the stub; per-OTP counts, background subtracted\n`);
  printTable(['process', 'store', 'per OTP', 'commands per OTP'], rows);
  const file = writeResult('roundtrips', {
    benchmark: 'roundtrips',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    requests: K,
    perOtp: { ...project, ...base },
    elapsedMs: { project: round(projectMs, 0), baseline: round(baselineMs, 0), idle: round(idleMs, 0) },
  });
  console.log(`\nresult written to ${file}`);
});
