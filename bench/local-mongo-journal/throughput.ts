// Writes per second on the plain memory backend against the journaled one, one writer at a time
// and ten at once (half inserts, half conditional updates: the service's two kinds of writes), with
// the default fsync (everysec) and with every write on disk before its answer (always).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import type { MongoOptions } from '../../scripts/local-services.js';
import { startJournalBenchServer } from './journal-bench-server.js';

async function measure(backend: NonNullable<MongoOptions['backend']>, concurrency: number, writes: number): Promise<number> {
  const server = await startJournalBenchServer(backend);
  const mongo = await connectMongo(`${server.url}/bench`);
  try {
    const rows = mongo.getClient().db().collection<{ _id: string; n: number; state: string }>('rows');
    await rows.insertOne({ _id: 'warm', n: 0, state: 'QUEUED' });
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < writes; i = next++) {
          if (i % 2 === 0) await rows.insertOne({ _id: `r${i}`, n: i, state: 'QUEUED' });
          else await rows.updateOne({ _id: `r${i - 1}`, state: 'QUEUED' }, { $set: { state: 'SENT' } });
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return writes / seconds;
  } finally {
    await mongo.close();
    await server.stop();
  }
}

/** Best of two rounds per arm, each on a fresh server. */
export async function measureThroughput(writes: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'journal-bench-'));
  try {
    const results: Record<string, number> = {};
    for (const concurrency of [1, 10]) {
      for (let round = 0; round < 2; round += 1) {
        const journalFile = join(dir, `journal-${concurrency}-${round}.bson`);
        for (const [name, backend] of [
          ['memory', 'memory'],
          ['journal', { journalFile }],
          ['journal fsync always', { journalFile: join(dir, `journal-always-${concurrency}-${round}.bson`), fsync: 'always' }],
        ] as const) {
          const rate = await measure(backend, concurrency, writes);
          const key = `${name} c${concurrency}`;
          results[key] = Math.max(results[key] ?? 0, rate);
          process.stdout.write(`${key} round ${round + 1}: ${rate.toFixed(0)} writes/s\n`);
        }
        if (round === 1)
          process.stdout.write(`journal size after ${writes} writes: ${(statSync(journalFile).size / 1024).toFixed(0)} KiB\n`);
      }
    }
    return Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(v)]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
