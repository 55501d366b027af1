// bench/login-timing: does the user-id step of the sign-in pages tell, by its timing, what kind
// of user id was typed? ROUNDS interleaved rounds (order within each round random) of one post of
// the user-id form for each kind: an ACTIVE user (a code is generated and queued), an unknown
// id, a blocked user and a DELETED one (no code), all ids of the same length, each posted once
// (so no budget answers instead of the step), against the real API process. Reports means,
// medians and percentiles per kind, and for each other kind against the known user the
// Mann-Whitney U test over the two samples and a sign test over the rounds.
// FLOOR_MS sets LOGIN_USER_STEP_FLOOR_MS (default: the shipped 250 ms; 0 shows the bare work);
// RESULT_NAME names the result file.
import { randomInt } from 'node:crypto';
import type { Connection } from 'mongoose';
import { registerBenchClient } from '../support/bench-clients.js';
import { toUserDoc, userModel } from '../../core/users/users.repository.js';
import type { User } from '../../core/users/user.types.js';
import { connectMongo, projectEnv, startProjectApi, storesOf } from '../support/arms.js';
import { envInt, envString, machineInfo, median, printTable, round, runBenchmark, startInfra, writeResult } from '../support/bench-kit.js';
import { mannWhitney, mean, signTest, summary } from '../support/timing-stats.js';

const ROUNDS = envInt('ROUNDS', 200);
const WARMUP = envInt('WARMUP_ROUNDS', 50);
const FLOOR_MS = envString('FLOOR_MS', '250');
/** Where the result goes in bench/results/ (e.g. `login-timing-before` for a run of older code). */
const RESULT_NAME = envString('RESULT_NAME', FLOOR_MS === '250' ? 'login-timing' : `login-timing-floor${FLOOR_MS}`);
const REDIRECT = 'https://app.example/callback';

const KINDS = ['known', 'unknown', 'blocked', 'deleted'] as const;
type Kind = (typeof KINDS)[number];
const idOf = (kind: Kind, i: number) => `${kind.slice(0, 1)}-${String(i).padStart(6, '0')}`;

async function insertUsers(mongo: Connection, total: number): Promise<void> {
  const Users = await userModel(mongo);
  const now = new Date();
  const user = (userId: string, i: number, extra: Partial<User>): User => ({
    enterpriseId: 'default',
    userId,
    loginId: userId,
    primaryGroup: 'retail',
    secondaryGroups: [],
    firstName: 'Bench',
    lastName: 'User',
    status: 'ACTIVE',
    sourceType: 'SVC',
    clientId: 'bench',
    mobileNumber: `+1555${String(i).padStart(7, '0')}`, // each number belongs to one live user
    createdAt: now,
    updatedAt: now,
    ...extra,
  });
  const docs = [];
  for (let i = 0; i < total; i++) {
    docs.push(toUserDoc(user(idOf('known', i), i, {})));
    docs.push(toUserDoc(user(idOf('blocked', i), 1_000_000 + i, { blocked: { reason: 'bench', at: now } })));
    docs.push(toUserDoc(user(idOf('deleted', i), 2_000_000 + i, { status: 'DELETED' })));
  }
  await Users.insertMany(docs, { ordered: false });
}

/** A fresh sign-in page (its own cookies and CSRF token), ready for the user-id post. */
async function openSignIn(apiUrl: string, clientId: string): Promise<{ url: string; cookie: string; csrf: string }> {
  const authorize = `${apiUrl}/svc/authserver/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 's' }).toString()}`;
  const first = await fetch(authorize, { redirect: 'manual' });
  await first.arrayBuffer();
  const location = first.headers.get('location');
  if (first.status !== 303 || !location) throw new Error(`authorize: ${first.status}`);
  const cookie = first.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const url = new URL(location, apiUrl).toString();
  const page = await fetch(url, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (page.status !== 200 || !csrf) throw new Error(`sign-in page: ${page.status}`);
  return { url, cookie, csrf };
}

await runBenchmark('login-timing', async (cleanup) => {
  const started = new Date();
  const infra = await startInfra();
  cleanup(infra.stop);
  // Budgets that never bite (each id is posted once, but every post comes from this address);
  // the provider address is never called (no dispatch worker runs), it only completes the setup.
  const env: Record<string, string> = {
    ...projectEnv(storesOf(infra), 'bench_login', 'blog', 'http://127.0.0.1:9'),
    RATE_LIMIT_LOGIN_PER_IP: '1000000000',
    RATE_LIMIT_SIGN_IN_STARTS_PER_IP: '1000000000',
    LOGIN_USER_STEP_FLOOR_MS: FLOOR_MS,
  };
  const mongo = await connectMongo(`${infra.mongo.url}/bench_login`);
  const total = WARMUP + ROUNDS;
  await insertUsers(mongo, total);
  const { client } = await registerBenchClient(mongo, { name: 'bench app', scopes: [], redirectUris: [REDIRECT] });
  await mongo.close();
  const api = await startProjectApi(env);
  cleanup(api.stop);

  const postUserId = async (userId: string): Promise<number> => {
    const page = await openSignIn(api.url, client.clientId);
    const body = new URLSearchParams({ csrf: page.csrf, step: 'user', userId }).toString();
    const t0 = performance.now();
    const res = await fetch(page.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: page.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    await res.arrayBuffer();
    const elapsed = performance.now() - t0;
    if (res.status !== 303) throw new Error(`user-id step for ${userId}: ${res.status}`);
    return elapsed;
  };

  const samples: Record<Kind, number[]> = { known: [], unknown: [], blocked: [], deleted: [] };
  for (let i = 0; i < total; i++) {
    const order = [...KINDS];
    for (let j = order.length - 1; j > 0; j--) {
      const k = randomInt(j + 1);
      [order[j], order[k]] = [order[k], order[j]];
    }
    const times = {} as Record<Kind, number>;
    for (const kind of order) times[kind] = await postUserId(idOf(kind, i));
    if (i >= WARMUP) for (const kind of KINDS) samples[kind].push(times[kind]);
  }

  const against = Object.fromEntries(
    (['unknown', 'blocked', 'deleted'] as const).map((kind) => {
      const mw = mannWhitney(samples.known, samples[kind]);
      const sign = signTest(samples.known.map((k, i) => k - samples[kind][i]));
      return [
        kind,
        {
          meanDifferenceMs: round(mean(samples.known) - mean(samples[kind]), 3),
          medianDifferenceMs: round(median(samples.known) - median(samples[kind]), 3),
          mannWhitney: { u: mw.u, z: round(mw.z, 3), p: round(mw.p, 4) },
          signTest: { knownSlower: sign.firstSlower, otherSlower: sign.secondSlower, p: round(sign.p, 4) },
        },
      ];
    }),
  );
  const result = {
    benchmark: 'login-timing',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    rounds: ROUNDS,
    warmupRounds: WARMUP,
    floorMs: Number(FLOOR_MS),
    ms: Object.fromEntries(KINDS.map((kind) => [kind, summary(samples[kind])])),
    knownAgainst: against,
  };
  printTable(
    ['user id', 'mean ms', 'median ms', 'p10 ms', 'p90 ms', 'MW p vs known', 'known slower'],
    KINDS.map((kind) => {
      const s = result.ms[kind] as ReturnType<typeof summary>;
      const vs = kind === 'known' ? undefined : (against[kind] as { mannWhitney: { p: number }; signTest: { knownSlower: number } });
      return [kind, s.mean, s.median, s.p10, s.p90, vs ? vs.mannWhitney.p : '', vs ? `${vs.signTest.knownSlower} of ${ROUNDS}` : ''];
    }),
  );
  console.log(`written to ${writeResult(RESULT_NAME, result)}`);
});
