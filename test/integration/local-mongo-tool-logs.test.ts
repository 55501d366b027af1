import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { startJournalBenchServer } from '../../bench/local-mongo-journal/journal-bench-server.js';
import { startInfra } from '../../bench/support/bench-kit.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { startFuzzStores } from '../../scripts/fuzz/fuzz-stores.js';
import { localServerLog, type LocalService } from '../../scripts/local-services.js';
import { eventually } from '../support/waiting.js';

/** A command mongo-java-server does not know: it answers an error and logs `unknown query` at ERROR. */
async function sendUnknownCommand(server: LocalService, marker: string): Promise<void> {
  const client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5000 });
  try {
    await expect(client.db('toollogs').command({ [marker]: 1 })).rejects.toThrow(/no such (cmd|command)/);
  } finally {
    await client.close();
  }
}

/** The log a developer's own run of a tool leaves, which the tests must not touch. */
const realLog = (name: string) => join(projectRoot, '.local', `mongo-server-${name}.log`);

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

/** What a developer's log file and its `.1` look like: a test that starts or rotates either changes it. */
const stateOf = (file: string) =>
  [file, `${file}.1`].map((name) => {
    const stat = statSync(name, { throwIfNoEntry: false });
    return stat ? { name, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs } : { name, absent: true };
  });

const directory = mkdtempSync(join(tmpdir(), 'tool-logs-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

// Fuzzing and the benchmarks start their own MongoDB-wire server: what it says (a reply it could not
// encode closes a connection, seen as a 503 or a failed request) must be readable after the run,
// in a file of their own beside the tests' and npm start's. These tests point the tools at a
// directory of their own: each start moves the file it finds to `.1`, and a developer's last run's
// log in .local must still be there after the tests.
describe.each([
  {
    tool: 'fuzzing (scripts/fuzz-api.ts)',
    name: 'fuzz',
    start: async (logDirectory: string) => {
      const stores = await startFuzzStores(logDirectory);
      await stores.redis.stop();
      return stores.mongo;
    },
  },
  {
    tool: 'the benchmarks (bench/support/bench-kit.ts startInfra)',
    name: 'bench',
    start: async (logDirectory: string) => {
      const infra = await startInfra({}, logDirectory);
      await infra.redis.stop();
      return infra.mongo;
    },
  },
  {
    tool: 'the local-mongo-journal benchmark (bench/local-mongo-journal)',
    name: 'bench-journal',
    start: (logDirectory: string) => startJournalBenchServer('memory', logDirectory),
  },
])('the MongoDB-wire server of $tool', ({ name, start }) => {
  test(`when it logs an error, then the line reaches mongo-server-${name}.log of the directory it was given, and .local's is left alone`, async () => {
    const before = stateOf(realLog(name));
    const mongo = await start(join(directory, name));
    try {
      const file = join(directory, name, `mongo-server-${name}.log`);
      expect(mongo.logFile).toBe(file);
      const marker = `svcToolLog${name.replace('-', '')}${Date.now()}`;
      await sendUnknownCommand(mongo, marker);
      await eventually(async () => (read(file).includes(marker) ? true : undefined));
    } finally {
      await mongo.stop();
    }
    expect(stateOf(realLog(name))).toEqual(before);
  });

  test(`when it is given no directory, then its log is .local/mongo-server-${name}.log`, () => {
    expect(localServerLog(name).file).toBe(realLog(name));
  });
});
