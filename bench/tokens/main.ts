// bench/tokens: what the authorization server costs, side by side with Keycloak.
//  1. client_credentials grants (HTTP Basic, CONNECTIONS closed-loop autocannon clients) on
//     svc-identity (POST /svc/authserver/oauth/token) and on Keycloak (its realm token endpoint),
//     ROUNDS interleaved rounds of DURATION_S each, who goes first alternating. The figure is
//     grants per CPU-second of each side's processes (svc: API + MongoDB-wire server + Redis;
//     Keycloak: its JVM), read from /proc, and the ratio of the two per round; medians reported.
//  2. Full authorization-code sign-ins (PKCE, HTTP Basic exchange), SIGNIN_ROUNDS interleaved
//     rounds of SIGNINS each, SIGNIN_CONCURRENCY at once. svc-identity: authorize → user id page →
//     user id posted (login OTP accepted into the pipeline) → code posted → resume → redirect with
//     the code → exchange; the login code is read from its delivery row (decrypted with the run's
//     key) instead of waiting for a dispatch worker. Keycloak: authorize → login page → username
//     and password posted → redirect with the code → exchange.
// Goal: svc-identity's client_credentials grants per CPU-second at least GOAL_FACTOR times Keycloak's.
import { createHash, randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { registerBenchClient } from '../support/bench-clients.js';
import { otpDeliveryId } from '../../core/deliveries/delivery.types.js';
import { decryptSecret } from '../../core/crypto/secret-box.js';
import {
  envInt,
  envString,
  machineInfo,
  median,
  printTable,
  round,
  runBenchmark,
  sleep,
  startInfra,
  waitUntilIdle,
  withCpu,
  writeResult,
} from '../support/bench-kit.js';
import { benchUserId, connectMongo, insertBenchUsers, projectEnv, startProjectApi, storesOf } from '../support/arms.js';
import { KEYCLOAK_CLIENT_ID, KEYCLOAK_VERSION, keycloakUser, startKeycloak } from '../support/keycloak.js';
import { Walker } from '../support/walker.js';

const DURATION_S = envInt('DURATION_S', 10);
const ROUNDS = envInt('ROUNDS', 6);
const WARMUP_S = envInt('WARMUP_S', 5);
const SVC_WARMUP_MAX_S = envInt('SVC_WARMUP_MAX_S', 120);
// The JVM compiles its hot paths over minutes of load on a busy machine: Keycloak warms up in
// slices until its grants per CPU-second stop improving, at least KEYCLOAK_WARMUP_S, at most
// KEYCLOAK_WARMUP_MAX_S.
const KEYCLOAK_WARMUP_S = envInt('KEYCLOAK_WARMUP_S', 90);
const KEYCLOAK_WARMUP_MAX_S = envInt('KEYCLOAK_WARMUP_MAX_S', 360);
const WARMUP_SLICE_S = 15;
const CONNECTIONS = envInt('CONNECTIONS', 10);
const SIGNINS = envInt('SIGNINS', 200);
const SIGNIN_ROUNDS = envInt('SIGNIN_ROUNDS', 2);
const SIGNIN_WARMUP = envInt('SIGNIN_WARMUP', 200);
const SIGNIN_CONCURRENCY = envInt('SIGNIN_CONCURRENCY', 10);
// Set BENCH_CPU_PROF_DIR to write a V8 CPU profile of the API process there.
const GOAL_FACTOR = 5;

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const LOGIN_LIMITS = {
  RATE_LIMIT_LOGIN_PER_IP: '1000000000',
  RATE_LIMIT_SIGN_IN_STARTS_PER_IP: '1000000000',
  RATE_LIMIT_LOGIN_PER_USER: '1000000000',
  RATE_LIMIT_LOGIN_CODES_PER_USER: '1000000000',
  RATE_LIMIT_LOGIN_PER_USER_ADDRESS: '1000000000',
  RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS: '1000000000',
  // The user-id step's floor is idle time that hides timing, not work; this benchmark measures work.
  LOGIN_USER_STEP_FLOOR_MS: '0',
};

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const formActionOf = (html: string) => (/<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '').replaceAll('&amp;', '&');
const basicAuth = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

type ArmName = 'svc-identity' | 'keycloak';
interface Arm {
  name: ArmName;
  pids: Record<string, number | undefined>;
  tokenUrl: string;
  basic: string;
  grantBody: string;
  signIn: (lane: number) => Promise<void>;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function exchange(arm: Arm, left: string, verifier: string): Promise<void> {
  const res = await fetch(arm.tokenUrl, {
    method: 'POST',
    headers: { authorization: arm.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: new URL(left).searchParams.get('code') ?? '',
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    }).toString(),
  });
  if (res.status !== 200) throw new Error(`${arm.name} exchange: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

async function grantLoad(arm: Arm, seconds: number) {
  const result = await autocannon({
    url: arm.tokenUrl,
    method: 'POST',
    headers: { authorization: arm.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: arm.grantBody,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${arm.name} client_credentials: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

async function runSignIns(arm: Arm, total: number) {
  let next = 0;
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: SIGNIN_CONCURRENCY }, async (_v, lane) => {
      while (next < total) {
        next++;
        const t = performance.now();
        await arm.signIn(lane);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: total / seconds,
    p50: latencies[Math.floor(latencies.length / 2)] ?? NaN,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
  };
}

/**
 * Loads the arm in slices until its grants per CPU-second have not beaten their best by 5 % for
 * two slices in a row (at least minS, at most maxS). Both arms warm up this way: a fixed short
 * warm-up left svc-identity's first rounds its slowest.
 */
async function warmUntilSteady(arm: Arm, minS: number, maxS: number): Promise<{ seconds: number; slices: number[] }> {
  const slices: number[] = [];
  let best = 0;
  let stale = 0;
  let seconds = 0;
  while (seconds < maxS && (seconds < minS || stale < 2)) {
    const { value, cpuMs } = await withCpu(arm.pids, () => grantLoad(arm, WARMUP_SLICE_S));
    seconds += WARMUP_SLICE_S;
    const perCpuSecond = round((value['2xx'] * 1000) / sum(Object.values(cpuMs)), 0);
    slices.push(perCpuSecond);
    if (perCpuSecond > best * 1.05) stale = 0;
    else stale++;
    best = Math.max(best, perCpuSecond);
  }
  return { seconds, slices };
}

/** Runs `measure` on both arms `rounds` times, who goes first alternating, each after its processes are idle. */
async function interleaved<T>(arms: [Arm, Arm], rounds: number, measure: (arm: Arm) => Promise<T>) {
  const out: { round: number; order: ArmName[]; results: Record<ArmName, { value: T; cpuMs: Record<string, number> }> }[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? arms : ([arms[1], arms[0]] as const);
    const results = {} as Record<ArmName, { value: T; cpuMs: Record<string, number> }>;
    for (const arm of order) {
      await waitUntilIdle(Object.values(arm.pids));
      results[arm.name] = await withCpu(arm.pids, () => measure(arm));
    }
    out.push({ round: r + 1, order: order.map((a) => a.name), results });
  }
  return out;
}

await runBenchmark('tokens', async (cleanup) => {
  const started = new Date();
  const machine = machineInfo();
  const infra = await startInfra();
  cleanup(infra.stop);
  const env: Record<string, string> = { ...projectEnv(storesOf(infra), 'bench_tokens', 'btk'), ...LOGIN_LIMITS };
  const cpuProf = envString('BENCH_CPU_PROF_DIR', '');
  const api = await startProjectApi(env, cpuProf ? ['--cpu-prof', '--cpu-prof-dir', cpuProf] : []);
  cleanup(api.stop);
  const encryptionKey = Buffer.from(env.OTP_ENCRYPTION_KEY as string, 'hex');
  const mongo = await connectMongo(`${infra.mongo.url}/bench_tokens`);
  cleanup(() => mongo.close());
  await insertBenchUsers(mongo, SIGNIN_CONCURRENCY);
  const { client, clientSecret } = await registerBenchClient(mongo, { name: 'bench app', scopes: ['otp'], redirectUris: [REDIRECT_URI] });

  console.log(`tokens: starting Keycloak ${KEYCLOAK_VERSION} (production mode, dev-file database)`);
  const keycloak = await startKeycloak({ users: SIGNIN_CONCURRENCY, redirectUri: REDIRECT_URI });
  cleanup(keycloak.stop);

  const svc: Arm = {
    name: 'svc-identity',
    pids: { app: api.child.pid, mongo: infra.mongo.pid, redis: infra.redis.pid },
    tokenUrl: `${api.url}/svc/authserver/oauth/token`,
    basic: basicAuth(client.clientId, clientSecret ?? ''),
    grantBody: 'grant_type=client_credentials&scope=otp',
    signIn: async (lane) => {
      const walker = new Walker(api.url);
      const { verifier, challenge } = pkce();
      const authorize = `${api.url}/svc/authserver/oauth/authorize?${new URLSearchParams({
        client_id: client.clientId,
        response_type: 'code',
        scope: 'openid notifications',
        redirect_uri: REDIRECT_URI,
        state: randomBytes(8).toString('hex'),
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString()}`;
      const first = await walker.go(authorize);
      if ('left' in first) throw new Error('left at authorize');
      const codePage = await walker.go(first.url, { csrf: csrfOf(first.html), step: 'user', userId: benchUserId(lane) });
      if ('left' in codePage) throw new Error('left at user id');
      const uid = new URL(codePage.url).pathname.split('/').pop() ?? '';
      // The code is generated once the page has answered: wait until it is attached to the state.
      let state: { otpUuid?: string } | null = null;
      for (let tries = 0; !state?.otpUuid; tries++) {
        if (tries > 0) await sleep(5);
        if (tries > 2000) throw new Error('no login code attached');
        state = await mongo.collection('login_states').findOne<{ otpUuid?: string }>({ uid });
      }
      const deliveryId = otpDeliveryId(state?.otpUuid ?? '', 'SMS');
      const row = await mongo.collection('deliveries').findOne<{ secretMacros: string }>({ _id: deliveryId as never });
      const code =
        (JSON.parse(decryptSecret(row?.secretMacros ?? '', encryptionKey, deliveryId)) as Record<string, string>).__SVC_OTP__ ?? '';
      const back = await walker.go(codePage.url, { csrf: csrfOf(codePage.html), step: 'code', otp: code });
      if (!('left' in back)) throw new Error(`sign-in did not finish: ${back.html.slice(0, 200)}`);
      await exchange(svc, back.left, verifier);
    },
  };
  const kc: Arm = {
    name: 'keycloak',
    pids: { jvm: keycloak.pid },
    tokenUrl: keycloak.tokenUrl,
    basic: basicAuth(KEYCLOAK_CLIENT_ID, keycloak.clientSecret),
    grantBody: 'grant_type=client_credentials',
    signIn: async (lane) => {
      const walker = new Walker(keycloak.url);
      const { verifier, challenge } = pkce();
      const authorize = `${keycloak.realmUrl}/protocol/openid-connect/auth?${new URLSearchParams({
        client_id: KEYCLOAK_CLIENT_ID,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: REDIRECT_URI,
        state: randomBytes(8).toString('hex'),
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString()}`;
      const page = await walker.go(authorize);
      if ('left' in page) throw new Error('keycloak: left at authorize');
      const { username, password } = keycloakUser(lane);
      const back = await walker.go(formActionOf(page.html), { username, password, credentialId: '' });
      if (!('left' in back)) throw new Error(`keycloak sign-in did not finish: ${back.html.slice(0, 200)}`);
      await exchange(kc, back.left, verifier);
    },
  };
  const arms: [Arm, Arm] = [svc, kc];

  // 1. client_credentials
  console.log(
    `tokens: client_credentials, ${ROUNDS} interleaved rounds of ${DURATION_S} s at ${CONNECTIONS} connections (warm-ups until steady: svc-identity ${WARMUP_S}-${SVC_WARMUP_MAX_S} s, Keycloak ${KEYCLOAK_WARMUP_S}-${KEYCLOAK_WARMUP_MAX_S} s)`,
  );
  // Keycloak's longer warm-up first, so that neither side sits idle for minutes between its
  // warm-up and the rounds: svc-identity's first round after idling through Keycloak's warm-up
  // cost 10-12 % more CPU per grant than the rounds after it.
  const keycloakWarmup = await warmUntilSteady(kc, KEYCLOAK_WARMUP_S, KEYCLOAK_WARMUP_MAX_S);
  console.log(`tokens: Keycloak warmed up ${keycloakWarmup.seconds} s, grants per CPU-second by slice: ${keycloakWarmup.slices.join(' ')}`);
  const svcWarmup = await warmUntilSteady(svc, WARMUP_S, SVC_WARMUP_MAX_S);
  console.log(`tokens: svc-identity warmed up ${svcWarmup.seconds} s, grants per CPU-second by slice: ${svcWarmup.slices.join(' ')}`);
  const loadDuringGrants: number[] = [];
  const grantRounds = (
    await interleaved(arms, ROUNDS, async (arm) => {
      loadDuringGrants.push(loadavg()[0] ?? NaN);
      return grantLoad(arm, DURATION_S);
    })
  ).map(({ round: r, order, results }) => {
    const side = (name: ArmName) => {
      const { value, cpuMs } = results[name];
      const grants = value['2xx'];
      const cpuTotal = sum(Object.values(cpuMs));
      return {
        grants,
        perSecond: round(grants / DURATION_S, 1),
        latencyP50Ms: value.latency.p50,
        latencyP99Ms: value.latency.p99,
        cpuMsPerGrant: Object.fromEntries(Object.entries(cpuMs).map(([k, ms]) => [k, round(ms / grants, 3)])),
        grantsPerCpuSecond: round((grants * 1000) / cpuTotal, 0),
      };
    };
    const s = side('svc-identity');
    const k = side('keycloak');
    return { round: r, order, svc: s, keycloak: k, ratio: round(s.grantsPerCpuSecond / k.grantsPerCpuSecond, 2) };
  });
  const grantMedians = {
    svcGrantsPerCpuSecond: median(grantRounds.map((g) => g.svc.grantsPerCpuSecond)),
    keycloakGrantsPerCpuSecond: median(grantRounds.map((g) => g.keycloak.grantsPerCpuSecond)),
    svcPerSecond: median(grantRounds.map((g) => g.svc.perSecond)),
    keycloakPerSecond: median(grantRounds.map((g) => g.keycloak.perSecond)),
    ratio: round(median(grantRounds.map((g) => g.ratio))),
  };

  // 2. full sign-ins
  console.log(
    `tokens: full sign-ins, ${SIGNIN_ROUNDS} interleaved rounds of ${SIGNINS}, ${SIGNIN_CONCURRENCY} at once (warm-up ${SIGNIN_WARMUP} each)`,
  );
  for (const arm of arms) await runSignIns(arm, SIGNIN_WARMUP);
  const signInRounds = (await interleaved(arms, SIGNIN_ROUNDS, (arm) => runSignIns(arm, SIGNINS))).map(({ round: r, order, results }) => {
    const side = (name: ArmName) => {
      const { value, cpuMs } = results[name];
      return {
        perSecond: round(value.perSecond, 1),
        latencyP50Ms: round(value.p50, 1),
        latencyP99Ms: round(value.p99, 1),
        cpuMsPerSignIn: Object.fromEntries(Object.entries(cpuMs).map(([k, ms]) => [k, round(ms / SIGNINS, 2)])),
        signInsPerCpuSecond: round((SIGNINS * 1000) / sum(Object.values(cpuMs)), 1),
      };
    };
    const s = side('svc-identity');
    const k = side('keycloak');
    return { round: r, order, svc: s, keycloak: k, ratio: round(s.signInsPerCpuSecond / k.signInsPerCpuSecond, 2) };
  });
  const signInMedians = {
    svcSignInsPerCpuSecond: round(median(signInRounds.map((g) => g.svc.signInsPerCpuSecond)), 1),
    keycloakSignInsPerCpuSecond: round(median(signInRounds.map((g) => g.keycloak.signInsPerCpuSecond)), 1),
    ratio: round(median(signInRounds.map((g) => g.ratio))),
  };

  console.log('');
  printTable(
    ['round', 'first', 'svc grants/s', 'svc per CPU-s', 'svc CPU ms app/mongo/redis', 'Keycloak grants/s', 'Keycloak per CPU-s', 'ratio'],
    grantRounds.map((g) => [
      g.round,
      g.order[0] ?? '',
      g.svc.perSecond,
      g.svc.grantsPerCpuSecond,
      Object.values(g.svc.cpuMsPerGrant).join(' / '),
      g.keycloak.perSecond,
      g.keycloak.grantsPerCpuSecond,
      g.ratio,
    ]),
  );
  console.log('');
  printTable(
    ['sign-in round', 'first', 'svc per s', 'svc per CPU-s', 'Keycloak per s', 'Keycloak per CPU-s', 'ratio'],
    signInRounds.map((g) => [
      g.round,
      g.order[0] ?? '',
      g.svc.perSecond,
      g.svc.signInsPerCpuSecond,
      g.keycloak.perSecond,
      g.keycloak.signInsPerCpuSecond,
      g.ratio,
    ]),
  );
  const met = grantMedians.ratio >= GOAL_FACTOR;
  console.log(
    `\nclient_credentials grants per CPU-second (medians): svc-identity ${grantMedians.svcGrantsPerCpuSecond}, Keycloak ${grantMedians.keycloakGrantsPerCpuSecond}; ratio ${grantMedians.ratio} (goal >= ${GOAL_FACTOR}): ${met ? 'met' : 'MISSED'}`,
  );
  console.log(
    `full sign-ins per CPU-second (medians): svc-identity ${signInMedians.svcSignInsPerCpuSecond}, Keycloak ${signInMedians.keycloakSignInsPerCpuSecond}; ratio ${signInMedians.ratio}`,
  );
  const file = writeResult('tokens', {
    benchmark: 'tokens',
    startedAt: started.toISOString(),
    machine: { ...machine, loadAverageAtEnd: loadavg().map((v) => round(v, 2)) },
    loadAverage1mDuringGrantRounds: { min: round(Math.min(...loadDuringGrants)), max: round(Math.max(...loadDuringGrants)) },
    keycloak: { version: KEYCLOAK_VERSION, java: envString('JAVA_HOME', 'java on PATH') },
    svcWarmup,
    keycloakWarmup,
    settings: {
      DURATION_S,
      ROUNDS,
      WARMUP_S,
      SVC_WARMUP_MAX_S,
      KEYCLOAK_WARMUP_S,
      KEYCLOAK_WARMUP_MAX_S,
      CONNECTIONS,
      SIGNINS,
      SIGNIN_ROUNDS,
      SIGNIN_WARMUP,
      SIGNIN_CONCURRENCY,
    },
    clientCredentials: { medians: grantMedians, rounds: grantRounds },
    signIns: { medians: signInMedians, rounds: signInRounds },
    goal: { factor: GOAL_FACTOR, met },
  });
  console.log(`result: ${file}`);
});
