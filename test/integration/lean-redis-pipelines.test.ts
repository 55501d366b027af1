import { createRequire } from 'node:module';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  LEAN_PIPELINES_IOREDIS_VERSION,
  leanRedisPipelines,
  libraryPipelineConstructor,
} from '../../core/platform/queues/lean-redis-pipelines.js';
import { createProducerRedis, createWorkerRedis } from '../../core/platform/queues/redis-connection.js';
import { useRunRedis } from '../support/run-redis.js';

// Pipelines that share their client's script methods, against the run's Redis (the cluster too, in
// the cluster pass): what they build must be what the library's own constructor builds.
describe('pipelines that share their client script methods', () => {
  const run = useRunRedis('lean-pipelines', createWorkerRedis);

  test('when the installed ioredis is the checked version, then the replacement is in place (an upgrade fails here until it is checked again)', () => {
    const { version } = createRequire(import.meta.url)('ioredis/package.json') as { version: string };
    expect(version).toBe(LEAN_PIPELINES_IOREDIS_VERSION);
    expect(leanRedisPipelines()).toBe(true);
    expect(libraryPipelineConstructor()).toBeDefined();
  });

  test('when a pipeline is made, then it has the same own state as one from the library constructor, without a copy of every script', () => {
    run.redis.defineCommand('leanEcho', { numberOfKeys: 1, lua: 'return {KEYS[1], ARGV[1]}' });
    const lean = run.redis.pipeline() as unknown as Record<string, unknown>;
    const Library = libraryPipelineConstructor()!;
    const library = new Library(run.redis as unknown as ConstructorParameters<typeof Library>[0]) as Record<string, unknown>;

    const scriptMethods = new Set(Object.keys(run.redis.scriptsSet).flatMap((name) => [name, `${name}Buffer`]));
    const libraryOwnState = Object.keys(library).filter((key) => !scriptMethods.has(key) && key !== '_shaToScript');
    expect(Object.keys(lean).sort()).toEqual(libraryOwnState.sort());
    expect(Object.getOwnPropertyNames(lean)).toContain('length');
    expect(lean.leanEcho).toBe((run.redis as unknown as Record<string, unknown>).leanEcho);
    expect(lean.leanEchoBuffer).toBe((run.redis as unknown as Record<string, unknown>).leanEchoBuffer);
    expect(lean._shaToScript).toEqual(library._shaToScript);
    expect(lean).toBeInstanceOf(Library);
    expect(lean.isCluster).toBe(library.isCluster);
    expect(lean.options).toBe(library.options);
    // The pipelines of one client share one holder of its methods.
    expect(Object.getPrototypeOf(run.redis.pipeline())).toBe(Object.getPrototypeOf(lean));
  });

  test('when scripts run in a pipeline and in a transaction, then each answers in order', async () => {
    const key = `${run.prefix}:echo`;
    const piped = run.redis.pipeline() as unknown as { leanEcho(key: string, arg: string): unknown; exec(): Promise<unknown> };
    piped.leanEcho(key, 'one');
    piped.leanEcho(key, 'two');
    expect(await piped.exec()).toEqual([
      [null, [key, 'one']],
      [null, [key, 'two']],
    ]);
    const transaction = run.redis.multi() as unknown as {
      leanEcho(key: string, arg: string): unknown;
      set(k: string, v: string): unknown;
      exec(): Promise<unknown>;
    };
    transaction.set(key, 'v');
    transaction.leanEcho(key, 'three');
    expect(await transaction.exec()).toEqual([
      [null, 'OK'],
      [null, [key, 'three']],
    ]);
  });

  test('when a script is defined after pipelines were made, then the next pipeline has it', async () => {
    run.redis.pipeline();
    run.redis.defineCommand('leanLater', { numberOfKeys: 1, lua: 'return ARGV[1]' });
    const piped = run.redis.pipeline() as unknown as { leanLater(key: string, arg: string): unknown; exec(): Promise<unknown> };
    piped.leanLater(`${run.prefix}:later`, 'late');
    expect(await piped.exec()).toEqual([[null, 'late']]);
  });

  test('when BullMQ adds jobs in bulk (one pipeline of its scripts), then every job is stored', async () => {
    const queue = new Queue(`lean-${Date.now()}`, { connection: run.redis as Redis, prefix: run.prefix });
    try {
      const jobs = await queue.addBulk([1, 2, 3].map((n) => ({ name: 'n', data: { n } })));
      expect(jobs.map((job) => job.id)).toHaveLength(3);
      expect(await queue.getWaitingCount()).toBe(3);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});

// A script defined on first use (the queue gauge's, the sent-journal's, the passkey challenges')
// can meet commands of other requests already waiting in the client's automatic pipeline of this
// turn: that pipeline was made before the script existed. ioredis then failed the script's call
// ("pipeline[...] is not a function") and crashed the process on the pipeline's answer
// ("results[i] is not iterable", an uncaught TypeError).
describe('a script defined while commands wait in the automatic pipeline', () => {
  const run = useRunRedis('lean-pipelines-auto', (target) => createProducerRedis(target, { enableAutoPipelining: true }));

  test('when a request waits in the pipeline of this turn and another defines and calls a script, then both answer', async () => {
    const key = `${run.prefix}:auto`;
    const waiting = run.redis.set(key, 'v');
    run.redis.defineCommand('autoDefinedEcho', { numberOfKeys: 1, lua: 'return {KEYS[1], ARGV[1]}' });
    const scripted = (run.redis as unknown as { autoDefinedEcho(key: string, arg: string): Promise<unknown> }).autoDefinedEcho(key, 'x');
    expect(await Promise.all([waiting, scripted])).toEqual(['OK', [key, 'x']]);
    // And the client keeps serving.
    expect(await run.redis.get(key)).toBe('v');
  });
});
