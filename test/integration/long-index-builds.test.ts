import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Connection } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { prepareStoreAtStart } from '../../core/migrations/store-check.js';
import { createDeclaredIndex } from '../../core/platform/db/unique-index-build.js';
import { isStoreUnavailable } from '../../core/platform/db/store-unavailable.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { startFreezableProxy, type FreezableProxy, type HeldCommand } from '../support/freezable-proxy.js';
import { memoryLogger } from '../support/memory-logger.js';
import { firstTestMongoHost, testMongoUri, testMongoUriVia } from '../support/test-mongo-uri.js';
import { uniqueName } from '../support/test-service.js';
import { eventually } from '../support/waiting.js';

const run = promisify(execFile);
const MIGRATE = join(projectRoot, 'dist', 'scripts', 'migrate.js');
/** The connections' socket timeout here: far shorter than the 30 s default, for a quick test. */
const SOCKET_TIMEOUT_MS = 1000;

/** The migration command as an operator runs it, with its exit code, report and log lines. */
async function migrate(
  uri: string,
): Promise<{ code: number; report: Record<string, unknown>; logs: Record<string, unknown>[]; stderr: string }> {
  const parsed = (stdout: string, stderr: string) => ({
    report: stdout.trim() === '' ? {} : (JSON.parse(stdout) as Record<string, unknown>),
    logs: stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>),
    stderr,
  });
  try {
    const { stdout, stderr } = await run(process.execPath, [MIGRATE], { env: { ...process.env, MONGODB_URI: uri, LOG_LEVEL: 'info' } });
    return { code: 0, ...parsed(stdout, stderr) };
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
    return { code, ...parsed(stdout, stderr) };
  }
}

/**
 * On MongoDB, createIndexes answers when the build is done: minutes on a collection of tens of
 * millions of documents. The local MongoDB-wire server builds at once, so a proxy holds the answer
 * to the first createIndexes for as long as the test says, on connections whose socket timeout is
 * short.
 */
describe('an index build that takes longer than the socket timeout', () => {
  let mongo: Connection;
  let proxy: FreezableProxy;
  let uriViaProxy: string;
  beforeEach(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('longidx')));
    const hello = (await mongo.db?.admin().command({ isMaster: 1 })) as { primary?: unknown } | undefined;
    proxy = await startFreezableProxy(typeof hello?.primary === 'string' ? hello.primary : firstTestMongoHost());
    uriViaProxy = `${testMongoUriVia(proxy.address, mongo.name)}&socketTimeoutMS=${SOCKET_TIMEOUT_MS}`;
    proxy.holdNextAnswerTo('createIndexes');
  });
  afterEach(async () => {
    await proxy.close();
    await mongo.close();
  });

  /** The build held, once it has lasted `ms` (the build's length on a large collection). */
  const heldFor = (ms: number) =>
    eventually(async () => ((held) => (held && Date.now() - held.since >= ms ? held : undefined))(proxy.held()));

  test('then npm run migrate waits for it past the socket timeout, says what it builds on which collection, and finishes once MongoDB answers', async () => {
    const running = migrate(uriViaProxy);
    const held: HeldCommand = await heldFor(3 * SOCKET_TIMEOUT_MS);
    proxy.release();
    const { code, logs, stderr } = await running;
    expect({ code, failure: code === 0 ? undefined : stderr }).toEqual({ code: 0, failure: undefined });
    const started = logs.find((line) => line.msg === 'MongoDB index build started' && line.collection === held.collection);
    expect(started).toEqual(expect.objectContaining({ collection: held.collection, index: expect.any(String) }));
    expect(logs).toContainEqual(
      expect.objectContaining({
        msg: 'MongoDB index build finished',
        collection: held.collection,
        index: started?.index,
        seconds: expect.any(Number),
      }),
    );
    // Built indeed, once MongoDB answered.
    expect((await mongo.collection(held.collection).indexes()).map((index) => index.name)).toContain(started?.index);
  });

  test('then a starting process that finds the index missing stops with an error that names it and says to run npm run migrate, which waits for the build', async () => {
    const viaProxy = await connectMongo(uriViaProxy);
    try {
      const failed = await prepareStoreAtStart(viaProxy, memoryLogger().logger).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      const held = proxy.held();
      expect(held).toBeDefined();
      expect(failed?.name).toBe('IndexBuildTimeoutError');
      // A request whose model's first use meets the same timeout still answers 503, as a store that
      // did not answer in time: the network timeout is the error's cause.
      expect(isStoreUnavailable(failed)).toBe(true);
      expect(failed?.message).toMatch(
        new RegExp(
          `^the index \\S+ of ${held?.collection ?? ''} was not built within 1 s \\(a large collection, or MongoDB busy\\); MongoDB may still be building it\\. ` +
            'Run npm run migrate \\(node dist/scripts/migrate\\.js\\), which waits for the build however long it takes, then start this version again\\.$',
        ),
      );
    } finally {
      proxy.release();
      await viaProxy.close(true);
    }
  });

  // The local MongoDB-wire server shows no build in currentOp: the lines say the build is awaited
  // (with MongoDB's own count, they say it runs: index-build-progress unit test).
  test('then, built through a connection for index builds, the build is reported as still awaited while it lasts, and ends when MongoDB answers', async () => {
    const { logger, lines } = memoryLogger();
    const viaProxy = await connectMongo(uriViaProxy);
    const builds = await connectMongo(uriViaProxy, { forIndexBuilds: true });
    try {
      await viaProxy.collection('things').insertOne({ name: 'a' });
      const building = createDeclaredIndex(
        viaProxy,
        'things',
        { name: 'name_1', key: { name: 1 }, options: { unique: true } },
        { connection: builds, logger, progressEveryMs: 200 },
      );
      // Past the socket timeout of both connections' URI, as MongoDB tells while it builds.
      await eventually(async () =>
        lines().find((line) => line.msg === 'MongoDB index build still waiting' && (line.elapsedSeconds as number) >= 2),
      );
      proxy.release();
      await building;
      const about = { collection: 'things', index: 'name_1' };
      expect(lines().map(({ msg, collection, index }) => ({ msg, collection, index }))).toEqual([
        { msg: 'MongoDB index build started', ...about },
        ...lines()
          .filter((line) => line.msg === 'MongoDB index build still waiting')
          .map(() => ({ msg: 'MongoDB index build still waiting', ...about })),
        { msg: 'MongoDB index build finished', ...about },
      ]);
      expect(lines().filter((line) => line.msg === 'MongoDB index build still waiting').length).toBeGreaterThanOrEqual(2);
      expect((await mongo.collection('things').indexes()).map((index) => index.name)).toContain('name_1');
    } finally {
      proxy.release();
      await builds.close(true);
      await viaProxy.close(true);
    }
  });
});
