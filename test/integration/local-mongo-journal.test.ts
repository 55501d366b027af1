import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose, { type mongo } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { parseFsyncMode, startMongoServer, type FsyncMode, type JournalBackend, type LocalService } from '../../scripts/local-services.js';
import {
  FILE_HEADER_BYTES,
  copyDirectory,
  dumpDatabase,
  flipByte,
  generationOf,
  magicOf,
  recordPositions,
  type DatabaseDump,
} from '../support/journal-files.js';

// Each case damages a copy of files written by a real server, then starts a real server on them.
const JOURNAL = 'journal.bson';
const SNAPSHOT = `${JOURNAL}.snapshot`;
const COMPACT_AFTER_BYTES = 4096;
type Item = { _id: string; n: number; key?: string; at?: Date };

const directories: string[] = [];
const running = new Set<LocalService>();

function tracked(directory: string): string {
  directories.push(directory);
  return directory;
}

afterAll(async () => {
  for (const server of running) await server.stop();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

async function start(directory: string, options: Partial<JournalBackend> = {}): Promise<LocalService> {
  const server = await startMongoServer({ backend: { journalFile: join(directory, JOURNAL), ...options } });
  running.add(server);
  return server;
}

/** The reason a start was refused (the server's own words are in the error). */
async function refusal(directory: string): Promise<string> {
  const outcome = await start(directory).then(
    () => new Error('the server started'),
    (error: unknown) => error as Error,
  );
  expect(outcome.message).toContain('local MongoDB-wire server refuses to start');
  return outcome.message;
}

async function withDb<T>(server: LocalService, use: (db: mongo.Db) => Promise<T>): Promise<T> {
  const connection = await connectMongo(`${server.url}/journaltest`);
  try {
    return await use(connection.getClient().db());
  } finally {
    await connection.close();
  }
}

async function stop(server: LocalService): Promise<void> {
  await server.stop();
  running.delete(server);
}

async function startAndDump(directory: string, options: Partial<JournalBackend> = {}): Promise<{ dump: DatabaseDump; log: string }> {
  const server = await start(directory, options);
  const dump = await withDb(server, dumpDatabase);
  await stop(server);
  return { dump, log: server.startupOutput ?? '' };
}

async function seedItems(items: mongo.Collection<Item>): Promise<void> {
  await items.createIndex({ key: 1 }, { unique: true, sparse: true });
  await items.createIndex({ at: 1 }, { expireAfterSeconds: 3600 });
  // Compound with a descending key, with the option mongoose adds: as the service's models declare.
  await items.createIndex({ key: 1, n: -1 }, { background: true });
  for (let i = 0; i < 20; i += 1) await items.insertOne({ _id: `item-${i}`, n: 0, key: `k${i}`, at: new Date(Date.UTC(2026, 0, 1, 0, i)) });
}

// A journal only (no compaction yet): 20 inserts, 100 updates, a delete, and a distinct last write.
const plain = { directory: '', expected: {} as DatabaseDump, beforeLast: {} as DatabaseDump };
// Compacted several times, with writes in the journal after the last snapshot.
const compacted = { directory: '', expected: {} as DatabaseDump, writes: 0 };
// The moment right after a compaction, and the journal that compaction replaced.
const justCompacted = { directory: '', expected: {} as DatabaseDump, previousJournal: '' };

beforeAll(async () => {
  plain.directory = tracked(mkdtempSync(join(tmpdir(), 'mongo-journal-plain-')));
  const plainServer = await start(plain.directory);
  await withDb(plainServer, async (db) => {
    const items = db.collection<Item>('items');
    await seedItems(items);
    for (let i = 0; i < 100; i += 1) await items.updateOne({ _id: `item-${i % 20}` }, { $inc: { n: 1 } });
    await items.deleteOne({ _id: 'item-19' });
    plain.beforeLast = await dumpDatabase(db);
    await items.insertOne({ _id: 'last', n: 1 });
    plain.expected = await dumpDatabase(db);
  });
  await stop(plainServer);

  compacted.directory = tracked(mkdtempSync(join(tmpdir(), 'mongo-journal-compacted-')));
  const journal = join(compacted.directory, JOURNAL);
  const previous = join(tracked(mkdtempSync(join(tmpdir(), 'mongo-journal-previous-'))), JOURNAL);
  const server = await start(compacted.directory, { compactAfterBytes: COMPACT_AFTER_BYTES });
  await withDb(server, async (db) => {
    const items = db.collection<Item>('items');
    await seedItems(items);
    // One write at a time, until well past many thresholds and right after a compaction (the
    // journal holds its header only): the journal as it was before that write is kept.
    for (let i = 0; i < 5000; i += 1) {
      copyFileSync(journal, previous);
      await items.updateOne({ _id: `item-${i % 20}` }, { $inc: { n: 1 } });
      compacted.writes += 1;
      if (i >= 400 && statSync(journal).size === FILE_HEADER_BYTES) break;
    }
    justCompacted.directory = tracked(copyDirectory(compacted.directory));
    justCompacted.previousJournal = previous;
    justCompacted.expected = await dumpDatabase(db);
    for (let i = 0; i < 5; i += 1) await items.updateOne({ _id: `item-${i}` }, { $inc: { n: 10 } });
    compacted.writes += 5;
    compacted.expected = await dumpDatabase(db);
  });
  await stop(server);
}, 300000);

describe('local MongoDB-wire server journal: damage at start-up is dropped only when it is a torn end, refused otherwise', () => {
  test('when the last record was cut short (a crash mid-append), it is dropped and logged with its offset, and every earlier write is intact', async () => {
    const directory = tracked(copyDirectory(plain.directory));
    const journal = join(directory, JOURNAL);
    const last = recordPositions(journal).at(-1)!;
    truncateSync(journal, statSync(journal).size - 5);

    const { dump, log } = await startAndDump(directory);
    expect(log).toContain(`WARNING: dropped the last record of ${journal} at offset ${last.offset}`);
    expect(log).toContain('a record cut short');
    expect(dump).toEqual(plain.beforeLast);
    // The torn bytes are gone from the file, so later appends follow the last whole record.
    expect(statSync(journal).size).toBe(last.offset);
  }, 60000);

  test('when zero bytes follow the last record (a power cut after the file grew), they are dropped and logged, and every write is intact', async () => {
    const directory = tracked(copyDirectory(plain.directory));
    const journal = join(directory, JOURNAL);
    const size = statSync(journal).size;
    appendFileSync(journal, Buffer.alloc(4096));

    const { dump, log } = await startAndDump(directory);
    expect(log).toContain(`WARNING: dropped the last record of ${journal} at offset ${size} (4096 bytes): zero bytes`);
    expect(dump).toEqual(plain.expected);
  }, 60000);

  test('when a byte is flipped in a record in the middle, start-up is refused naming the file, the offset and what to do, the file is left as it was, and following the advice starts', async () => {
    const directory = tracked(copyDirectory(plain.directory));
    const journal = join(directory, JOURNAL);
    const positions = recordPositions(journal);
    const middle = Math.floor(positions.length / 2);
    const damaged = positions[middle]!;
    flipByte(journal, damaged.offset + 12 + 3);
    const before = readFileSync(journal);

    const message = await refusal(directory);
    expect(message).toContain(`the journal ${journal} is damaged at offset ${damaged.offset}: the record fails its checksum`);
    expect(message).toContain(`To keep the ${middle} writes before the damage and lose the rest`);
    expect(message).toContain(`truncate -s ${damaged.offset} ${journal}`);
    expect(readFileSync(journal).equals(before)).toBe(true);

    truncateSync(journal, damaged.offset);
    const { log } = await startAndDump(directory);
    expect(log).toContain(`replayed ${middle} journal writes`);
  }, 60000);

  test('when a record length in the middle is damaged (which would look like a record running past the end), start-up is refused, not truncated there', async () => {
    const directory = tracked(copyDirectory(plain.directory));
    const journal = join(directory, JOURNAL);
    const damaged = recordPositions(journal)[5]!;
    flipByte(journal, damaged.offset + 2);

    const message = await refusal(directory);
    expect(message).toContain(
      `the journal ${journal} is damaged at offset ${damaged.offset}: the record's length field fails its checksum`,
    );
  }, 60000);
});

describe('local MongoDB-wire server journal: compaction into a snapshot', () => {
  test('after many writes the journal stays bounded beside a snapshot, and a restart gives every document and index back, unique indexes still enforced', async () => {
    const journal = join(compacted.directory, JOURNAL);
    const snapshot = join(compacted.directory, SNAPSHOT);
    expect(magicOf(snapshot)).toBe('SVCSNAP1');
    expect(magicOf(journal)).toBe('SVCJRNL1');
    // Several compactions happened, and the pair on disk belongs together.
    expect(generationOf(journal)).toBeGreaterThanOrEqual(3);
    expect(generationOf(snapshot)).toBe(generationOf(journal));
    // Every user's data is in there: readable by the owner only.
    expect([statSync(journal).mode & 0o777, statSync(snapshot).mode & 0o777]).toEqual([0o600, 0o600]);
    const records = recordPositions(journal);
    expect(records.length).toBe(5);
    const largestRecord = Math.max(...records.map((r) => 12 + r.payloadBytes));
    expect(statSync(journal).size).toBeLessThanOrEqual(Math.max(COMPACT_AFTER_BYTES, statSync(snapshot).size) + largestRecord);

    const directory = tracked(copyDirectory(compacted.directory));
    const server = await start(directory, { compactAfterBytes: COMPACT_AFTER_BYTES });
    await withDb(server, async (db) => {
      expect(await dumpDatabase(db)).toEqual(compacted.expected);
      const sum = (await db.collection<Item>('items').find().toArray()).reduce((total, item) => total + item.n, 0);
      expect(sum).toBe(compacted.writes - 5 + 50);
      await expect(db.collection<Item>('items').insertOne({ _id: 'dup', n: 0, key: 'k1' })).rejects.toMatchObject({ code: 11000 });
    });
    await stop(server);
    expect(server.startupOutput).toMatch(/loaded a snapshot of \d+ records \(\d+ bytes\) and replayed 5 journal writes/);
  }, 60000);

  test('when a crash left the temporary files of an unfinished compaction, they are removed and the data is the same', async () => {
    const directory = tracked(copyDirectory(compacted.directory));
    const snapshot = join(directory, SNAPSHOT);
    writeFileSync(`${snapshot}.tmp`, readFileSync(snapshot).subarray(0, Math.floor(statSync(snapshot).size / 2)));
    writeFileSync(join(directory, `${JOURNAL}.tmp`), Buffer.from('SVCJRN'));

    const { dump, log } = await startAndDump(directory);
    expect(log).toContain(`removed ${snapshot}.tmp, left by a compaction that did not finish`);
    expect(log).toContain(`removed ${join(directory, JOURNAL)}.tmp`);
    expect(dump).toEqual(compacted.expected);
    expect(existsSync(`${snapshot}.tmp`)).toBe(false);
  }, 60000);

  test('when a crash came between the snapshot rename and the fresh journal, the snapshot is used, the old journal (already in it) is not replayed again, and the data is the same', async () => {
    const directory = tracked(copyDirectory(justCompacted.directory));
    const journal = join(directory, JOURNAL);
    copyFileSync(justCompacted.previousJournal, journal);
    expect(generationOf(join(directory, SNAPSHOT))).toBe(generationOf(journal) + 1);

    const { dump, log } = await startAndDump(directory);
    expect(log).toContain('a compaction was interrupted after its snapshot was written');
    expect(dump).toEqual(justCompacted.expected);
    expect(generationOf(journal)).toBe(generationOf(join(directory, SNAPSHOT)));
  }, 60000);

  test('when the snapshot is cut short or has a flipped byte, start-up is refused naming the snapshot', async () => {
    const truncated = tracked(copyDirectory(compacted.directory));
    const truncatedSnapshot = join(truncated, SNAPSHOT);
    truncateSync(truncatedSnapshot, Math.floor(statSync(truncatedSnapshot).size / 2));
    expect(await refusal(truncated)).toMatch(new RegExp(`the snapshot ${truncatedSnapshot} is damaged at offset \\d+: it is cut short`));

    const flipped = tracked(copyDirectory(compacted.directory));
    const flippedSnapshot = join(flipped, SNAPSHOT);
    const record = recordPositions(flippedSnapshot)[1]!;
    flipByte(flippedSnapshot, record.offset + 12 + 10);
    expect(await refusal(flipped)).toContain(
      `the snapshot ${flippedSnapshot} is damaged at offset ${record.offset}: the record fails its checksum`,
    );
  }, 60000);

  test('when the snapshot a journal starts from is missing, start-up is refused instead of starting without it', async () => {
    const directory = tracked(copyDirectory(compacted.directory));
    rmSync(join(directory, SNAPSHOT));
    expect(await refusal(directory)).toContain('which starts from a snapshot, and the snapshot is missing');
  }, 60000);
});

describe('local MongoDB-wire server journal: old format and settings', () => {
  test('a journal written before records had checksums is replayed (its torn end dropped), converted to a snapshot and a checksummed journal, and reads back the same', async () => {
    const directory = tracked(mkdtempSync(join(tmpdir(), 'mongo-journal-legacy-')));
    const journal = join(directory, JOURNAL);
    const entry = (cmd: string, q: Record<string, unknown>) => Buffer.from(mongoose.mongo.BSON.serialize({ db: 'journaltest', cmd, q }));
    const whole = [
      entry('createIndexes', { createIndexes: 'items', indexes: [{ key: { key: 1 }, name: 'key_1', unique: true, sparse: true }] }),
      entry('insert', {
        insert: 'items',
        documents: [
          { _id: 'a', n: 1, key: 'ka' },
          { _id: 'b', n: 2 },
        ],
        ordered: true,
      }),
      entry('update', { update: 'items', updates: [{ q: { _id: 'a' }, u: { $inc: { n: 5 } } }], ordered: true }),
    ];
    const torn = entry('insert', { insert: 'items', documents: [{ _id: 'torn', n: 0 }], ordered: true });
    writeFileSync(journal, Buffer.concat([...whole, torn.subarray(0, torn.length - 7)]));

    const first = await startAndDump(directory);
    expect(first.log).toContain(`dropped the last record of ${journal}`);
    expect(first.log).toContain('converting the old-format journal');
    expect(first.dump.collections.items?.documents).toEqual([
      { _id: 'a', n: 6, key: 'ka' },
      { _id: 'b', n: 2 },
    ]);
    expect(magicOf(journal)).toBe('SVCJRNL1');
    expect(magicOf(join(directory, SNAPSHOT))).toBe('SVCSNAP1');

    const second = await startAndDump(directory);
    expect(second.dump).toEqual(first.dump);
    expect(second.log).not.toContain('converting');
  }, 60000);

  test('LOCAL_MONGO_FSYNC accepts always, everysec and off, and anything else is refused with the accepted values', async () => {
    expect(['always', 'everysec', 'off', undefined].map((value) => parseFsyncMode(value))).toEqual([
      'always',
      'everysec',
      'off',
      undefined,
    ]);
    expect(() => parseFsyncMode('sometimes')).toThrow("LOCAL_MONGO_FSYNC must be one of always, everysec, off (got 'sometimes')");
    const directory = tracked(mkdtempSync(join(tmpdir(), 'mongo-journal-fsync-')));
    const outcome = await start(directory, { fsync: 'sometimes' as FsyncMode }).catch((error: unknown) => error as Error);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toContain("LOCAL_MONGO_FSYNC must be always, everysec or off (got 'sometimes')");
  }, 60000);
});
