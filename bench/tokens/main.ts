// bench/tokens: what the authorization server costs.
//  1. client_credentials tokens per second (POST /svc/authserver/oauth/token, HTTP Basic,
//     CONNECTIONS closed-loop clients), with the CPU each process spends per token.
//  2. Full authorization-code sign-ins per second, login steps included: authorize → user id
//     page → user id posted (login OTP accepted into the pipeline) → code posted → resume →
//     redirect with the code → token exchange (PKCE, HTTP Basic). SIGNIN_CONCURRENCY sign-ins
//     run at once. The login code is read from its delivery row (decrypted with the run's key)
//     instead of waiting for a dispatch worker: delivery has its own benchmarks.
// Goal: client_credentials grants per vCPU at least 10x Keycloak's published sizing figure of
// about 120 per second per vCPU, i.e. CPU per grant (all processes) at most 1000/1200 ms.
import { createHash, randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { registerClient } from '../../core/clients/clients.service.js';
import { otpDeliveryId } from '../../core/deliveries/delivery.types.js';
import { decryptSecret } from '../../core/crypto/secret-box.js';
import {
  envInt,
  envString,
  machineInfo,
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

const DURATION_S = envInt('DURATION_S', 10);
const WARMUP_S = envInt('WARMUP_S', 5);
const CONNECTIONS = envInt('CONNECTIONS', 10);
const SIGNINS = envInt('SIGNINS', 300);
// Set BENCH_CPU_PROF_DIR to write a V8 CPU profile of the API process there.
const SIGNIN_CONCURRENCY = envInt('SIGNIN_CONCURRENCY', 10);
const KEYCLOAK_GRANTS_PER_VCPU = 120;
const GOAL_FACTOR = 10;

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const LOGIN_LIMITS = {
  RATE_LIMIT_LOGIN_PER_IP: '1000000000',
  RATE_LIMIT_LOGIN_PER_USER: '1000000000',
  RATE_LIMIT_LOGIN_CODES_PER_USER: '1000000000',
  RATE_LIMIT_LOGIN_PER_USER_ADDRESS: '1000000000',
  RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS: '1000000000',
  // The user-id step's floor is idle time that hides timing, not work; this benchmark measures work.
  LOGIN_USER_STEP_FLOOR_MS: '0',
};

/** A cookie-keeping client that follows redirects by hand until they leave the service. */
class Walker {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}
  async go(url: string, form?: Record<string, string>): Promise<{ url: string; html: string } | { left: string }> {
    let current = url;
    let body = form ? new URLSearchParams(form).toString() : undefined;
    for (let hop = 0; hop < 10; hop++) {
      if (!current.startsWith(this.base)) return { left: current };
      const res = await fetch(current, {
        method: body === undefined ? 'GET' : 'POST',
        redirect: 'manual',
        headers: {
          cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(body !== undefined ? { body } : {}),
      });
      for (const line of res.headers.getSetCookie()) {
        const pair = line.split(';')[0] ?? '';
        const eq = pair.indexOf('=');
        if (eq > 0) this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer();
        current = new URL(location, current).toString();
        body = undefined;
        continue;
      }
      const html = await res.text();
      if (res.status !== 200) throw new Error(`${current}: ${res.status} ${html.slice(0, 200)}`);
      return { url: current, html };
    }
    throw new Error('too many redirects');
  }
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

await runBenchmark('tokens', async (cleanup) => {
  const started = new Date();
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
  const { client, clientSecret } = await registerClient(mongo, { name: 'bench app', scopes: ['otp'], redirectUris: [REDIRECT_URI] });
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(clientSecret ?? '')}`).toString('base64')}`;
  const pids = { app: api.child.pid, mongo: infra.mongo.pid, redis: infra.redis.pid };

  // 1. client_credentials
  const grantLoad = async (seconds: number) => {
    const result = await autocannon({
      url: `${api.url}/svc/authserver/oauth/token`,
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=otp',
      connections: CONNECTIONS,
      pipelining: 1,
      duration: seconds,
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`client_credentials: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return result;
  };
  console.log(`tokens: client_credentials ${DURATION_S} s at ${CONNECTIONS} connections (warm-up ${WARMUP_S} s)`);
  if (WARMUP_S > 0) await grantLoad(WARMUP_S);
  await waitUntilIdle(Object.values(pids));
  const grants = await withCpu(pids, () => grantLoad(DURATION_S));
  const grantCount = grants.value['2xx'];
  const grantCpu = Object.fromEntries(Object.entries(grants.cpuMs).map(([k, ms]) => [k, round(ms / grantCount, 3)]));
  const grantCpuTotal = round(
    Object.values(grantCpu).reduce((a, b) => a + b, 0),
    3,
  );

  // 2. full sign-ins
  const signIn = async (userIndex: number) => {
    const walker = new Walker(api.url);
    const verifier = randomBytes(32).toString('base64url');
    const authorize = `${api.url}/svc/authserver/oauth/authorize?${new URLSearchParams({
      client_id: client.clientId,
      response_type: 'code',
      scope: 'openid notifications',
      redirect_uri: REDIRECT_URI,
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()}`;
    const first = await walker.go(authorize);
    if ('left' in first) throw new Error('left at authorize');
    const codePage = await walker.go(first.url, { csrf: csrfOf(first.html), step: 'user', userId: benchUserId(userIndex) });
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
    const tokenRes = await fetch(`${api.url}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: new URL(back.left).searchParams.get('code') ?? '',
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      }).toString(),
    });
    if (tokenRes.status !== 200) throw new Error(`exchange: ${tokenRes.status} ${await tokenRes.text()}`);
    await tokenRes.arrayBuffer();
  };
  const runSignIns = async (total: number) => {
    let next = 0;
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: SIGNIN_CONCURRENCY }, async (_v, lane) => {
        while (next < total) {
          next++;
          const t = performance.now();
          await signIn(lane);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      seconds,
      perSecond: total / seconds,
      p50: latencies[Math.floor(latencies.length / 2)] ?? NaN,
      p99: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
    };
  };
  console.log(`tokens: ${SIGNINS} full sign-ins, ${SIGNIN_CONCURRENCY} at once`);
  await runSignIns(Math.min(50, SIGNINS));
  await waitUntilIdle(Object.values(pids));
  const signIns = await withCpu(pids, () => runSignIns(SIGNINS));
  const signInCpu = Object.fromEntries(Object.entries(signIns.cpuMs).map(([k, ms]) => [k, round(ms / SIGNINS, 3)]));

  const goalCpuMs = 1000 / (KEYCLOAK_GRANTS_PER_VCPU * GOAL_FACTOR);
  const grantsPerVcpu = round(1000 / grantCpuTotal, 0);
  console.log('');
  printTable(
    ['measure', 'per second', 'p50 ms', 'p99 ms', 'CPU ms app', 'CPU ms MongoDB-wire', 'CPU ms Redis', 'CPU ms total'],
    [
      [
        'client_credentials grant',
        round(grantCount / DURATION_S, 1),
        grants.value.latency.p50,
        grants.value.latency.p99,
        grantCpu.app ?? NaN,
        grantCpu.mongo ?? NaN,
        grantCpu.redis ?? NaN,
        grantCpuTotal,
      ],
      [
        'full sign-in (login steps + exchange)',
        round(signIns.value.perSecond, 1),
        round(signIns.value.p50, 1),
        round(signIns.value.p99, 1),
        signInCpu.app ?? NaN,
        signInCpu.mongo ?? NaN,
        signInCpu.redis ?? NaN,
        round(
          Object.values(signInCpu).reduce((a, b) => a + b, 0),
          3,
        ),
      ],
    ],
  );
  console.log(
    `\nclient_credentials grants per vCPU (1000 / CPU ms per grant, all processes): ${grantsPerVcpu}; goal >= ${KEYCLOAK_GRANTS_PER_VCPU * GOAL_FACTOR} (CPU per grant <= ${round(goalCpuMs, 3)} ms): ${grantCpuTotal <= goalCpuMs ? 'met' : 'MISSED'}`,
  );
  const file = writeResult('tokens', {
    benchmark: 'tokens',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    settings: { DURATION_S, WARMUP_S, CONNECTIONS, SIGNINS, SIGNIN_CONCURRENCY },
    clientCredentials: {
      perSecond: round(grantCount / DURATION_S, 1),
      latencyP50Ms: grants.value.latency.p50,
      latencyP99Ms: grants.value.latency.p99,
      cpuMsPerGrant: grantCpu,
      cpuMsPerGrantTotal: grantCpuTotal,
      grantsPerVcpu,
    },
    signIns: {
      perSecond: round(signIns.value.perSecond, 2),
      latencyP50Ms: round(signIns.value.p50, 1),
      latencyP99Ms: round(signIns.value.p99, 1),
      cpuMsPerSignIn: signInCpu,
    },
    goal: { keycloakGrantsPerVcpu: KEYCLOAK_GRANTS_PER_VCPU, factor: GOAL_FACTOR, met: grantCpuTotal <= goalCpuMs },
  });
  console.log(`result: ${file}`);
});
