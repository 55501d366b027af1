import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { startMongoServer, type FsyncMode, type JournalBackend, type LocalService } from '../../scripts/local-services.js';

// The default set-up, and the strictest one with compactions (snapshot + fresh journal) happening
// while the writes stream in and when the server is killed.
describe.each([
  { label: 'default settings', settings: {} },
  { label: 'fsync always, compaction every 8 KiB', settings: { fsync: 'always' as FsyncMode, compactAfterBytes: 8192 } },
])('local MongoDB-wire server on its journal ($label): acknowledged writes survive kill -9', ({ settings }) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mongo-journal-'));
  const backend: JournalBackend = { journalFile: join(dataDir, 'journal.bson'), ...settings };
  let server: LocalService | undefined;

  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const connect = (url: string) => connectMongo(`${url}/durable`);
  type Item = { _id: string; n: number; key?: string };

  test('when the server is killed with SIGKILL mid-load, then after a restart on the same file every acknowledged write is there, and unique indexes still hold', async () => {
    server = await startMongoServer({ backend });
    const before = await connect(server.url);
    const items = before.getClient().db().collection<Item>('items');
    await items.createIndex({ key: 1 }, { unique: true, sparse: true });
    await items.insertOne({ _id: 'counter', n: 0 });
    for (let i = 0; i < 50; i += 1) await items.updateOne({ _id: 'counter' }, { $inc: { n: 1 } });
    await items.insertOne({ _id: 'keyed', n: 0, key: 'k1' });

    // A stream of inserts, killed while some are still in flight.
    const acknowledged: string[] = [];
    const inFlight = Array.from({ length: 300 }, (_, i) =>
      items.insertOne({ _id: `doc-${i}`, n: i }).then(
        () => void acknowledged.push(`doc-${i}`),
        () => undefined,
      ),
    );
    while (acknowledged.length < 100) await new Promise((resolve) => setImmediate(resolve));
    process.kill(server.pid, 'SIGKILL');
    await Promise.all(inFlight);
    await before.close(true).catch(() => undefined);

    // With a small threshold the kill came after compactions: the data is in a snapshot plus journal.
    expect(existsSync(`${backend.journalFile}.snapshot`)).toBe(backend.compactAfterBytes !== undefined);
    server = await startMongoServer({ backend, port: server.port });
    const after = await connect(server.url);
    try {
      const restored = after.getClient().db().collection<Item>('items');
      expect(await restored.findOne({ _id: 'counter' })).toEqual({ _id: 'counter', n: 50 });
      const present = new Set((await restored.find({ _id: { $in: acknowledged } }).toArray()).map((d) => d._id));
      expect(acknowledged.filter((id) => !present.has(id))).toEqual([]);
      await expect(restored.insertOne({ _id: 'other', n: 1, key: 'k1' })).rejects.toMatchObject({ code: 11000 });
      // Documents without the key are not in the sparse index: any number of them is fine.
      await restored.insertMany([
        { _id: 'nokey-1', n: 1 },
        { _id: 'nokey-2', n: 2 },
      ]);
    } finally {
      await after.close();
    }
  }, 120000);
});
