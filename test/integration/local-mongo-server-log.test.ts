import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { startMongoServer, type LocalService, type ServerLogFile } from '../../scripts/local-services.js';
import { eventually } from '../support/waiting.js';

// The local MongoDB-wire server's own errors (a reply it could not encode closes the client's
// connection, seen by the service as 'database is not reachable') are only readable if its log
// reaches a file: these start the real server with a log file and make it log.
const directory = mkdtempSync(join(tmpdir(), 'mongo-server-log-'));
const running = new Set<LocalService>();

afterAll(async () => {
  for (const server of running) await server.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function start(log: ServerLogFile): Promise<LocalService> {
  const server = await startMongoServer({ log });
  running.add(server);
  return server;
}

/** A command mongo-java-server does not know: it answers an error and logs `unknown query` at ERROR. */
async function sendUnknownCommands(server: LocalService, count: number): Promise<void> {
  const client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5000 });
  try {
    for (let i = 0; i < count; i += 1) {
      await expect(client.db('logtest').command({ svcUnknownCommand: i })).rejects.toThrow(/no such (cmd|command)/);
    }
  } finally {
    await client.close();
  }
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

test('when a client sends a command the server does not know, then its ERROR line reaches the log file; the INFO lines of the connections opened and closed, a command answered with an error (a duplicate key, the command quoted whole) and the warning of an index it does not keep, do not', async () => {
  const file = join(directory, 'first', 'mongo-server.log');
  const server = await start({ file });
  const client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5000 });
  try {
    const users = client.db('logtest').collection<{ _id: string; email: string }>('users');
    await users.createIndex({ email: 1 }, { unique: true });
    // mongo-java-server warns that it keeps no such index (the service's models declare dozens).
    await users.createIndex({ createdAt: 1 });
    await users.insertOne({ _id: 'u1', email: 'someone@example.com' });
    // Answered as the command's error (an insert's would be a write error, never logged).
    await expect(users.findOneAndUpdate({ _id: 'u2' }, { $set: { email: 'someone@example.com' } }, { upsert: true })).rejects.toThrow(
      /duplicate key/,
    );
  } finally {
    await client.close();
  }
  // After the duplicate key, on the same server: once its line is in the file, anything the
  // duplicate key logged would be there too.
  await sendUnknownCommands(server, 1);
  const log = await eventually(async () => {
    const text = read(file);
    return text.includes('svcUnknownCommand') ? text : undefined;
  });
  expect(log).toMatch(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\S* \[[^\]]+\] ERROR de\.bwaldvogel\.mongo\.backend\.AbstractMongoDatabase - unknown query: \{"svcUnknownCommand" : 0/m,
  );
  // Connections were opened and closed around both clients: logged at INFO ('client ... connected',
  // 'channel ... closed'), left out.
  expect(log).not.toMatch(/ INFO |client \S+ connected|channel .* closed/);
  expect(log).not.toMatch(/duplicate key|example\.com|failed to handle/);
  expect(log).not.toMatch(/secondary index/);
  // Only its owner reads it: the lines may quote stored documents.
  expect(statSync(file).mode & 0o777).toBe(0o600);
});

test('when the log passes its size, then it turns into <file>.1 and a new file starts, so at most twice the size is kept; and a restart keeps the previous run as <file>.1', async () => {
  const file = join(directory, 'rotating', 'mongo-server.log');
  const maxBytes = 1000;
  const server = await start({ file, maxBytes });
  // About 150 bytes a line: 30 lines fill the file more than three times.
  await sendUnknownCommands(server, 30);
  await eventually(async () => (read(file).includes('"svcUnknownCommand" : 29') ? true : undefined));
  expect(statSync(file).size).toBeLessThanOrEqual(maxBytes);
  expect(statSync(`${file}.1`).size).toBeLessThanOrEqual(maxBytes);
  expect(read(`${file}.1`)).toMatch(/unknown query: \{"svcUnknownCommand" : \d+/);
  // The first lines are gone: only two files are kept.
  expect(read(file) + read(`${file}.1`)).not.toMatch(/"svcUnknownCommand" : 0\D/);

  await server.stop();
  running.delete(server);
  const lastRun = read(file);
  await start({ file, maxBytes });
  expect(read(`${file}.1`)).toBe(lastRun);
  expect(read(file)).toBe('');
});

/** Why a start failed, as the error of startMongoServer gives it. */
async function startFailure(log: ServerLogFile, options: { journalFile?: string; port?: number }): Promise<string> {
  const outcome = await startMongoServer({
    log,
    ...(options.port ? { port: options.port } : {}),
    ...(options.journalFile ? { backend: { journalFile: options.journalFile } } : {}),
  }).then(
    (server) => {
      running.add(server);
      return new Error('the server started');
    },
    (error: unknown) => error as Error,
  );
  return outcome.message;
}

test('when the server cannot start (damaged files, a port in use), then the reason still reaches whoever started it, and the log file too', async () => {
  const data = join(directory, 'damaged');
  const file = join(data, 'mongo-server.log');
  mkdirSync(data);
  // A snapshot without its journal: the files do not belong together.
  writeFileSync(join(data, 'journal.bson.snapshot'), 'not a snapshot');
  expect(await startFailure({ file }, { journalFile: join(data, 'journal.bson') })).toContain('local MongoDB-wire server refuses to start');
  expect(read(file)).toContain('local MongoDB-wire server refuses to start');

  const busy = await start({ file: join(directory, 'busy', 'mongo-server.log') });
  const portFile = join(directory, 'port-in-use', 'mongo-server.log');
  expect(await startFailure({ file: portFile }, { port: busy.port })).toMatch(/Address already in use/);
  expect(read(portFile)).toMatch(/Address already in use/);
});

test('when the log file cannot be written (its folder cannot be made), then the server starts anyway, keeps its stderr, and says why on it', async () => {
  // A file where the log's folder should be: neither the folder nor the file can be made (as
  // with a read-only `.local`, and also when run as root, which file modes do not stop).
  const blocker = join(directory, 'not-a-folder');
  writeFileSync(blocker, '');
  const server = await start({ file: join(blocker, 'mongo-server.log') });
  expect(server.startupOutput).toMatch(
    /local MongoDB-wire server: cannot write its log to \S*not-a-folder\/mongo-server\.log \(.+\); it logs to stderr/,
  );
  const client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5000 });
  try {
    expect(await client.db('logtest').command({ ping: 1 })).toMatchObject({ ok: 1 });
  } finally {
    await client.close();
  }
});

test('when the journal cannot be compacted after start, then its warning reaches the log file (a detached server has no one reading its output)', async () => {
  const data = join(directory, 'compaction');
  const file = join(data, 'mongo-server.log');
  const journalFile = join(data, 'journal.bson');
  const server = await startMongoServer({ log: { file }, backend: { journalFile, compactAfterBytes: 1024 } });
  running.add(server);
  // A folder, not empty, where the snapshot is written first: the compaction fails, the data stays.
  mkdirSync(join(`${journalFile}.snapshot.tmp`, 'in-the-way'), { recursive: true });
  const client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5000 });
  try {
    const notes = client.db('logtest').collection<{ _id: number; text: string }>('notes');
    for (let i = 0; i < 20; i += 1) await notes.insertOne({ _id: i, text: 'x'.repeat(100) });
    expect(await notes.countDocuments()).toBe(20);
  } finally {
    await client.close();
  }
  const log = await eventually(async () => {
    const text = read(file);
    return text.includes('compaction failed') ? text : undefined;
  });
  expect(log).toMatch(/journal: WARNING: compaction failed, the journal goes on growing/);
});
