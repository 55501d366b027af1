// bench/tokens/grant-ab: what one build of the API costs per client_credentials grant against
// another, on a shared machine. Every build named in AB_DISTS (`label=path/to/dist`, comma
// separated, optionally followed by Node flags of that build alone after a space; default: this
// tree's dist/ alone) runs as its own API process on the same stores with
// the same client, all started before the first measurement. Each is warmed up, then loaded in
// turn, ROUNDS times, the order alternating by round (A B, B A, ...), each round after every
// process is idle; the figure is the API process's CPU per grant (from /proc), medians reported.
// Interleaving is what makes two builds comparable when other work comes and goes on the machine.
// With one build it is the grant load of bench/tokens without Keycloak: set BENCH_CPU_PROF_DIR to
// profile it (a V8 CPU profile of every API process, written when it stops), or API_NODE_FLAGS
// (space separated) to start the API processes with other Node options (e.g. --perf-basic-prof for
// `perf record`, which counts CPU time only: V8's profile samples by the wall clock, so on a busy
// machine it piles samples where the process was waiting for a core, mostly on the socket write).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { registerBenchClient } from '../support/bench-clients.js';
import {
  distDir,
  envInt,
  envString,
  findFreePort,
  httpOk,
  machineInfo,
  median,
  printTable,
  round,
  runBenchmark,
  startInfra,
  startNode,
  waitUntilIdle,
  withCpu,
  writeResult,
} from '../support/bench-kit.js';
import { connectMongo, projectEnv, storesOf } from '../support/arms.js';

const DURATION_S = envInt('DURATION_S', 5);
const ROUNDS = envInt('ROUNDS', 8);
const WARMUP_S = envInt('WARMUP_S', 20);
const CONNECTIONS = envInt('CONNECTIONS', 10);

interface Build {
  label: string;
  dist: string;
  /** Node or V8 flags of this build's API process alone (after API_NODE_FLAGS). */
  flags: string[];
}

/** `label=path[ flag ...]`, comma separated: a build may also be the same dist/ with other flags. */
function buildsToCompare(): Build[] {
  const spec = envString('AB_DISTS', `current=${distDir}`);
  return spec.split(',').map((entry) => {
    const at = entry.indexOf('=');
    if (at <= 0) throw new Error(`AB_DISTS: expected label=path, got "${entry}"`);
    const [dist = '', ...flags] = entry
      .slice(at + 1)
      .split(' ')
      .filter(Boolean);
    return { label: entry.slice(0, at), dist, flags };
  });
}

/** A process's CPU in the kernel so far (ms), from /proc: what its system calls cost, against its total. */
function systemCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) * 10; // stime, USER_HZ 100
  } catch {
    return NaN;
  }
}

const basicAuth = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

await runBenchmark('tokens-grant-ab', async (cleanup) => {
  const builds = buildsToCompare();
  const infra = await startInfra();
  cleanup(infra.stop);
  const env = projectEnv(storesOf(infra), 'bench_tokens_ab', 'btab');
  const mongo = await connectMongo(`${infra.mongo.url}/bench_tokens_ab`);
  cleanup(() => mongo.close());
  // The client bench/tokens registers (one that also signs users in).
  const { client, clientSecret } = await registerBenchClient(mongo, {
    name: 'bench app',
    scopes: ['otp'],
    redirectUris: ['http://127.0.0.1:9/callback'],
  });
  const basic = basicAuth(client.clientId, clientSecret ?? '');
  const cpuProf = envString('BENCH_CPU_PROF_DIR', '');
  const nodeArgs = [
    ...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', cpuProf] : []),
    ...envString('API_NODE_FLAGS', '').split(' ').filter(Boolean),
  ];

  const apis = [];
  for (const build of builds) {
    const port = await findFreePort();
    const url = `http://127.0.0.1:${port}`;
    const api = await startNode(
      `API ${build.label}`,
      join(build.dist, 'api', 'main.js'),
      { ...env, PORT: String(port), PUBLIC_URL: url },
      { readyCheck: () => httpOk(`${url}/readyz`), nodeArgs: [...nodeArgs, ...build.flags] },
    );
    cleanup(api.stop);
    console.log(`grant-ab: API ${build.label} is process ${api.child.pid}`);
    apis.push({ ...build, url, pid: api.child.pid });
  }
  const stores = { mongo: infra.mongo.pid, redis: infra.redis.pid };

  const load = async (url: string, seconds: number) => {
    const result = await autocannon({
      url: `${url}/svc/authserver/oauth/token`,
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=otp',
      connections: CONNECTIONS,
      pipelining: 1,
      duration: seconds,
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return result['2xx'];
  };

  console.log(`grant-ab: ${apis.map((a) => a.label).join(' vs ')}; warm-up ${WARMUP_S} s each, ${ROUNDS} rounds of ${DURATION_S} s`);
  // Warmed in slices taken in turn, so that no build sits idle long after its warm-up.
  for (let done = 0; done < WARMUP_S; done += 5) for (const api of apis) await load(api.url, Math.min(5, WARMUP_S - done));

  const perRound: {
    round: number;
    label: string;
    grants: number;
    apiMsPerGrant: number;
    apiSystemShare: number;
    storesMsPerGrant: number;
    load1m: number;
  }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? apis : [...apis].reverse();
    for (const api of order) {
      await waitUntilIdle([...apis.map((a) => a.pid), stores.mongo, stores.redis]);
      const systemBefore = systemCpuMs(api.pid);
      const { value: grants, cpuMs } = await withCpu({ api: api.pid, ...stores }, () => load(api.url, DURATION_S));
      const systemMs = systemCpuMs(api.pid) - systemBefore;
      perRound.push({
        round: r + 1,
        label: api.label,
        grants,
        apiMsPerGrant: round((cpuMs.api ?? NaN) / grants, 4),
        apiSystemShare: round(systemMs / (cpuMs.api ?? NaN), 3),
        storesMsPerGrant: round(((cpuMs.mongo ?? 0) + (cpuMs.redis ?? 0)) / grants, 4),
        load1m: round(loadavg()[0] ?? NaN),
      });
    }
  }

  console.log('');
  printTable(
    ['round', 'build', 'grants', 'API ms/grant', 'API in kernel', 'stores ms/grant', 'load 1m'],
    perRound.map((p) => [p.round, p.label, p.grants, p.apiMsPerGrant, p.apiSystemShare, p.storesMsPerGrant, p.load1m]),
  );
  const medians = Object.fromEntries(
    apis.map((api) => [api.label, round(median(perRound.filter((p) => p.label === api.label).map((p) => p.apiMsPerGrant)), 4)]),
  );
  const first = apis[0]?.label ?? '';
  // Paired by round: each round loads every build within seconds of the others.
  const ratios = Object.fromEntries(
    apis.slice(1).map((api) => {
      const byRound = Array.from({ length: ROUNDS }, (_v, r) => {
        const of = (label: string) => perRound.find((p) => p.round === r + 1 && p.label === label)?.apiMsPerGrant ?? NaN;
        return of(api.label) / of(first);
      });
      return [`${api.label}/${first}`, { median: round(median(byRound), 3), rounds: byRound.map((v) => round(v, 3)) }];
    }),
  );
  console.log(`\nAPI CPU per grant (medians, ms): ${JSON.stringify(medians)}; paired ratios: ${JSON.stringify(ratios)}`);
  const file = writeResult('tokens-grant-ab', {
    benchmark: 'tokens-grant-ab',
    startedAt: new Date().toISOString(),
    machine: machineInfo(),
    builds,
    settings: { DURATION_S, ROUNDS, WARMUP_S, CONNECTIONS },
    medians,
    ratios,
    rounds: perRound,
  });
  console.log(`result: ${file}`);
});
