// bench/instant-notifications: how fast a notification reaches the user's open stream, and an
// answer the enterprise's waiting request, with 100 and 1,000 streams open; what each open
// stream costs in memory; and, in the same run, a bare Redis PUBLISH → subscriber round trip
// as the floor every figure is compared with.
//
// Two API processes (their real entry point, on the same Redis and MongoDB-wire server) hold the
// streams, half each: one process accepts at most 1,000 streams, and events always travel
// through Redis pub/sub to every process anyway. Notifications are created and answered through
// process A; half the streams, and half the waiting requests, are on process B.
//
// Each sample, one after another (nothing else is in flight):
//  1. bare round trip: PUBLISH on one ioredis connection → message on another (this process);
//  2. stream: POST /v1/notifications (A) for one user → its `created` event read on the stream;
//  3. wait: GET /v1/notifications/{uuid}?wait=30 sent (A or B, alternately), WAIT_SETTLE_MS later
//     the user's answer POST /v1/me/notifications/{uuid}/action (A) → the wait's answer read.
// Memory: both APIs run with --expose-gc and bench/support/gc-probe.js; after each step of streams
// the bench asks both for their memory after a full collection.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { benchUserId, connectMongo, insertBenchUsers, projectEnv, startProjectApi, storesOf, type ProjectApi } from '../support/arms.js';
import {
  distDir,
  envInt,
  envString,
  machineInfo,
  percentile,
  printTable,
  processCpuMs,
  projectRoot,
  round,
  runBenchmark,
  sleep,
  startInfra,
  waitUntilIdle,
  writeResult,
} from '../support/bench-kit.js';
import { openStream, type OpenStream } from '../support/sse-stream.js';
import { enterpriseToken, userTokens } from './accounts.js';

const LEVELS = [
  ...new Set(
    envString('STREAMS', '100,1000')
      .split(',')
      .map((s) => Number(s.trim()))
      .filter((n) => Number.isInteger(n) && n > 0),
  ),
].sort((a, b) => a - b);
const SAMPLES = envInt('SAMPLES', 300);
const WARMUP = envInt('WARMUP', 100);
const IDLE_S = envInt('IDLE_S', 15);
const WAIT_SETTLE_MS = envInt('WAIT_SETTLE_MS', 50);
const EVENT_TIMEOUT_MS = 10_000;
const OPEN_AT_ONCE = 50;

interface Memory {
  seq: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

interface Sample {
  /** When the sample started, in ms since the last stream of this step opened. */
  atMs: number;
  bareMs: number;
  postMs: number;
  streamMs: number;
  /** Whether the stream was on process B (the notification was created through A). */
  streamOnOther: boolean;
  answerMs: number;
  waitMs: number;
  waitOnOther: boolean;
}

const stats = (values: number[]) => ({ p50: round(percentile(values, 50), 2), p99: round(percentile(values, 99), 2) });

await runBenchmark('instant-notifications', async (cleanup) => {
  if (LEVELS.length === 0) throw new Error('STREAMS must list stream counts, e.g. 100,1000');
  const started = new Date();
  const infra = await startInfra();
  cleanup(infra.stop);
  const env = projectEnv(storesOf(infra), 'bench_instant', 'bin');
  const probeHook = pathToFileURL(join(distDir, 'bench', 'support', 'gc-probe.js')).href;
  const probeFile = (name: string) =>
    join(projectRoot, '.local', 'bench-logs', `instant-notifications-memory-${name}-${process.pid}.jsonl`);
  const startApi = async (name: string, publicUrl?: string) => {
    const file = probeFile(name);
    const api = await startProjectApi({ ...env, GC_PROBE_FILE: file }, ['--expose-gc', '--import', probeHook], publicUrl);
    cleanup(api.stop);
    return { api, file };
  };
  const a = await startApi('a');
  // B is another process of the same deployment: tokens issued through A are good on it.
  const b = await startApi('b', a.api.url);
  const apis: ProjectApi[] = [a.api, b.api];

  /** Both APIs' memory after a full collection (summed), through SIGUSR2 and their probe files. */
  const memory = async (): Promise<{ a: Memory; b: Memory }> => {
    const read = (file: string): Memory[] => {
      try {
        return readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Memory);
      } catch {
        return [];
      }
    };
    const probe = async ({ api, file }: { api: ProjectApi; file: string }): Promise<Memory> => {
      const before = read(file).length;
      api.child.kill('SIGUSR2');
      for (let tries = 0; tries < 200; tries++) {
        const lines = read(file);
        if (lines.length > before) return lines[lines.length - 1] as Memory;
        await sleep(50);
      }
      throw new Error(`${file}: no memory probe answer (was the API started with the probe?)`);
    };
    return { a: await probe(a), b: await probe(b) };
  };

  const maxStreams = LEVELS[LEVELS.length - 1] as number;
  const mongo = await connectMongo(`${infra.mongo.url}/bench_instant`);
  cleanup(() => mongo.close());
  await insertBenchUsers(mongo, maxStreams);
  const tokens = await userTokens(
    mongo,
    Array.from({ length: maxStreams }, (_, i) => benchUserId(i)),
  );
  const enterprise = await enterpriseToken(a.api.url, mongo);

  // The floor: a bare PUBLISH → subscriber round trip on the same Redis, from this process.
  const pub = new Redis(infra.redis.url, { maxRetriesPerRequest: null });
  const sub = new Redis(infra.redis.url, { maxRetriesPerRequest: null });
  cleanup(async () => {
    pub.disconnect();
    sub.disconnect();
  });
  const bareChannel = 'bench:instant:bare';
  const bareWaiters = new Map<string, (atMs: number) => void>();
  sub.on('message', (_channel: string, message: string) => bareWaiters.get(message)?.(performance.now()));
  await sub.subscribe(bareChannel);
  let bareSeq = 0;
  const bareRoundTrip = async (): Promise<number> => {
    const message = String(++bareSeq);
    const arrived = new Promise<number>((resolve) => bareWaiters.set(message, resolve));
    const t0 = performance.now();
    await pub.publish(bareChannel, message);
    const at = await arrived;
    bareWaiters.delete(message);
    return at - t0;
  };

  // Streams: stream i is user i's, on API i % 2. `created` events resolve whoever awaits that user.
  const streams: OpenStream[] = [];
  const createdWaiters = new Map<number, (uuid: string, atMs: number) => void>();
  const openUserStream = async (i: number) => {
    const api = apis[i % 2] as ProjectApi;
    const stream = await openStream(
      `${api.url}/v1/me/notifications/stream`,
      { authorization: `Bearer ${tokens[i] as string}` },
      (event, atMs) => {
        if (event.event !== 'created') return;
        const { notification_uuid: uuid } = JSON.parse(event.data) as { notification_uuid: string };
        createdWaiters.get(i)?.(uuid, atMs);
      },
    );
    if (stream.status !== 200) throw new Error(`stream of user ${i} on API ${i % 2 ? 'B' : 'A'}: ${stream.status}`);
    return stream;
  };
  const openStreamsUpTo = async (n: number) => {
    while (streams.length < n) {
      const from = streams.length;
      const batch = Array.from({ length: Math.min(OPEN_AT_ONCE, n - from) }, (_, k) => openUserStream(from + k));
      streams.push(...(await Promise.all(batch)));
    }
    openedAt = performance.now();
  };
  cleanup(async () => streams.forEach((s) => s.close()));

  const json = { 'content-type': 'application/json' };
  let openedAt = 0;
  const sampleOnce = async (k: number, open: number): Promise<Sample> => {
    const atMs = performance.now() - openedAt;
    const bareMs = await bareRoundTrip();
    // A prime stride spreads samples over users and over both processes.
    const user = (k * 7919) % open;
    const created = new Promise<{ uuid: string; atMs: number }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no created event for user ${user} within ${EVENT_TIMEOUT_MS} ms`)),
        EVENT_TIMEOUT_MS,
      );
      createdWaiters.set(user, (uuid, atMs) => {
        clearTimeout(timer);
        resolve({ uuid, atMs });
      });
    });
    const t0 = performance.now();
    const posted = await fetch(`${a.api.url}/v1/notifications`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${enterprise}` },
      body: JSON.stringify({
        userId: benchUserId(user),
        body: [{ lng: 'English', subject: 'Login request', message: 'Approve the login from Chrome on Linux?' }],
        actions: [
          { label: 'Approve', action: 'accept', authlevel: 1 },
          { label: 'Reject', action: 'reject', authlevel: 1 },
        ],
      }),
    });
    const postBody = (await posted.json()) as { notification_uuid?: string };
    const postMs = performance.now() - t0;
    if (posted.status !== 201 || !postBody.notification_uuid) throw new Error(`create: ${posted.status} ${JSON.stringify(postBody)}`);
    const uuid = postBody.notification_uuid;
    const event = await created;
    createdWaiters.delete(user);
    if (event.uuid !== uuid) throw new Error(`user ${user}: created event for ${event.uuid}, expected ${uuid}`);

    const waitOnOther = k % 2 === 1;
    const waitApi = apis[waitOnOther ? 1 : 0] as ProjectApi;
    const waiting = fetch(`${waitApi.url}/v1/notifications/${uuid}?wait=30`, { headers: { authorization: `Bearer ${enterprise}` } }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as { status?: string }, atMs: performance.now() }),
    );
    // Lets the waiting request reach its listening state first (its own reads take a few ms).
    await sleep(WAIT_SETTLE_MS);
    const t1 = performance.now();
    const answered = await fetch(`${a.api.url}/v1/me/notifications/${uuid}/action`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${tokens[user] as string}` },
      body: JSON.stringify({ response: 'accept' }),
    });
    await answered.arrayBuffer();
    const answerMs = performance.now() - t1;
    if (answered.status !== 200) throw new Error(`answer: ${answered.status}`);
    const waited = await waiting;
    if (waited.status !== 200 || waited.body.status !== 'UPDATED') throw new Error(`wait: ${waited.status} ${JSON.stringify(waited.body)}`);
    return {
      atMs,
      bareMs,
      postMs,
      streamMs: event.atMs - t0,
      streamOnOther: user % 2 === 1,
      answerMs,
      waitMs: waited.atMs - t1,
      waitOnOther,
    };
  };
  const pids = { apiA: a.api.child.pid, apiB: b.api.child.pid, mongo: infra.mongo.pid, redis: infra.redis.pid };

  // Warm-up on two streams (one per process), then closed: JIT, connections, the subscriptions.
  console.log(`instant-notifications: warm-up, ${WARMUP} samples on 2 streams`);
  await openStreamsUpTo(2);
  for (let k = 0; k < WARMUP; k++) await sampleOnce(k, 2);
  for (const s of streams.splice(0)) {
    s.close();
    await s.ended;
  }
  await waitUntilIdle(Object.values(pids));
  const memoryAtZero = await memory();

  /** CPU ms per second each process spends over IDLE_S with nothing sent (holding the streams). */
  const idleCpu = async () => {
    const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuMs(pid)]));
    await sleep(IDLE_S * 1000);
    return Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, round((processCpuMs(pid) - (before[k] as number)) / IDLE_S, 1)]));
  };
  /** Commands Redis has run so far (INFO commandstats), to count its work per sample. */
  const redisCommands = async () => {
    const info = await pub.info('commandstats');
    return [...info.matchAll(/^cmdstat_([a-z|_]+):calls=(\d+)/gm)].reduce<Record<string, number>>((all, m) => {
      all[m[1] as string] = Number(m[2]);
      return all;
    }, {});
  };
  const idleAtZero = await idleCpu();

  const levels = [];
  for (const n of LEVELS) {
    console.log(`instant-notifications: ${n} open streams`);
    // Memory per stream: the growth of both processes while the streams of this step open.
    await waitUntilIdle(Object.values(pids));
    const memBefore = streams.length === 0 ? memoryAtZero : await memory();
    const added = n - streams.length;
    await openStreamsUpTo(n);
    await waitUntilIdle(Object.values(pids));
    const mem = await memory();
    const perStream = (key: 'heapUsed' | 'external' | 'rss') =>
      round((mem.a[key] - memBefore.a[key] + (mem.b[key] - memBefore.b[key])) / added / 1024, 1);
    // Idle: what holding the streams costs with no event (heartbeats, token checks every 15 s).
    const idleCpuMsPerS = await idleCpu();
    const samples: Sample[] = [];
    const commandsBefore = await redisCommands();
    for (let k = 0; k < SAMPLES; k++) samples.push(await sampleOnce(k, n));
    const commandsAfter = await redisCommands();
    // Per sample: create, stream delivery, wait, answer (the bare round trip's PUBLISH is left out).
    const redisPerSample = Object.fromEntries(
      Object.entries(commandsAfter)
        .map(
          ([name, calls]) =>
            [name, round((calls - (commandsBefore[name] ?? 0) - (name === 'publish' ? SAMPLES : 0)) / SAMPLES, 2)] as const,
        )
        .filter(([name, perSample]) => perSample > 0 && name !== 'info'),
    );
    // Every sample, for a look at when the slow ones happen (not committed).
    writeFileSync(
      join(projectRoot, '.local', 'bench-logs', `instant-notifications-samples-${n}-${process.pid}.json`),
      JSON.stringify(
        samples.map((s) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, typeof v === 'number' ? round(v, 2) : v]))),
      ),
    );
    const bare = stats(samples.map((s) => s.bareMs));
    const stream = stats(samples.map((s) => s.streamMs));
    const wait = stats(samples.map((s) => s.waitMs));
    levels.push({
      streams: n,
      samples: SAMPLES,
      bareRoundTripMs: bare,
      streamEventMs: {
        ...stream,
        ratioP50: round(stream.p50 / bare.p50, 1),
        ratioP99: round(stream.p99 / bare.p99, 1),
        sameProcess: stats(samples.filter((s) => !s.streamOnOther).map((s) => s.streamMs)),
        otherProcess: stats(samples.filter((s) => s.streamOnOther).map((s) => s.streamMs)),
      },
      waitAnswerMs: {
        ...wait,
        ratioP50: round(wait.p50 / bare.p50, 1),
        ratioP99: round(wait.p99 / bare.p99, 1),
        sameProcess: stats(samples.filter((s) => !s.waitOnOther).map((s) => s.waitMs)),
        otherProcess: stats(samples.filter((s) => s.waitOnOther).map((s) => s.waitMs)),
      },
      // What the event adds once the request that caused it has answered.
      streamAfterCreateAnswerMs: stats(samples.map((s) => s.streamMs - s.postMs)),
      waitAfterAnswerAnswerMs: stats(samples.map((s) => s.waitMs - s.answerMs)),
      createRequestMs: stats(samples.map((s) => s.postMs)),
      answerRequestMs: stats(samples.map((s) => s.answerMs)),
      memoryPerStreamKiB: { streamsAdded: added, heapUsed: perStream('heapUsed'), external: perStream('external'), rss: perStream('rss') },
      memoryAfterGcMiB: {
        a: { rss: round(mem.a.rss / 2 ** 20, 1), heapUsed: round(mem.a.heapUsed / 2 ** 20, 1) },
        b: { rss: round(mem.b.rss / 2 ** 20, 1), heapUsed: round(mem.b.heapUsed / 2 ** 20, 1) },
      },
      idleCpuMsPerSecond: idleCpuMsPerS,
      redisCommandsPerSample: redisPerSample,
    });
  }

  console.log('');
  printTable(
    [
      'streams',
      'bare p50/p99 ms',
      'stream p50/p99 ms',
      'ratio p50/p99',
      'wait p50/p99 ms',
      'ratio p50/p99',
      'KiB/stream heap',
      'KiB/stream RSS',
      'idle CPU ms/s A+B',
    ],
    levels.map((l) => [
      l.streams,
      `${l.bareRoundTripMs.p50} / ${l.bareRoundTripMs.p99}`,
      `${l.streamEventMs.p50} / ${l.streamEventMs.p99}`,
      `${l.streamEventMs.ratioP50} / ${l.streamEventMs.ratioP99}`,
      `${l.waitAnswerMs.p50} / ${l.waitAnswerMs.p99}`,
      `${l.waitAnswerMs.ratioP50} / ${l.waitAnswerMs.ratioP99}`,
      l.memoryPerStreamKiB.heapUsed,
      l.memoryPerStreamKiB.rss,
      round((l.idleCpuMsPerSecond.apiA ?? 0) + (l.idleCpuMsPerSecond.apiB ?? 0), 1),
    ]),
  );
  console.log('');
  const pair = (x: { p50: number; p99: number }) => `${x.p50} / ${x.p99}`;
  printTable(
    [
      'streams',
      'create req p50/p99',
      'event after it p50/p99',
      'answer req p50/p99',
      'wait after it p50/p99',
      'Redis cmds/sample',
      'idle CPU ms/s A / B / MongoDB',
    ],
    levels.map((l) => [
      l.streams,
      pair(l.createRequestMs),
      pair(l.streamAfterCreateAnswerMs),
      pair(l.answerRequestMs),
      pair(l.waitAfterAnswerAnswerMs),
      round(
        Object.values(l.redisCommandsPerSample).reduce((x, y) => x + y, 0),
        2,
      ),
      `${l.idleCpuMsPerSecond.apiA} / ${l.idleCpuMsPerSecond.apiB} / ${l.idleCpuMsPerSecond.mongo}`,
    ]),
  );
  console.log(`idle CPU ms/s without streams: A ${idleAtZero.apiA} / B ${idleAtZero.apiB} / MongoDB ${idleAtZero.mongo}`);
  const file = writeResult('instant-notifications', {
    benchmark: 'instant-notifications',
    startedAt: started.toISOString(),
    machine: machineInfo(),
    settings: { STREAMS: LEVELS, SAMPLES, WARMUP, IDLE_S, WAIT_SETTLE_MS, apiProcesses: 2 },
    memoryAtZeroMiB: {
      a: { rss: round(memoryAtZero.a.rss / 2 ** 20, 1), heapUsed: round(memoryAtZero.a.heapUsed / 2 ** 20, 1) },
      b: { rss: round(memoryAtZero.b.rss / 2 ** 20, 1), heapUsed: round(memoryAtZero.b.heapUsed / 2 ** 20, 1) },
    },
    idleCpuMsPerSecondWithoutStreams: idleAtZero,
    levels,
  });
  console.log(`result: ${file}`);
});
