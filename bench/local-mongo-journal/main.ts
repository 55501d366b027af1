// What the local MongoDB-wire server's write-ahead journal costs: writes per second on the plain
// memory backend against the journaled one, one writer at a time and ten at once.
// Run: npm run bench:local-mongo-journal   (WRITES=<per arm, default 4000>)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectMongo } from '../../core/db/mongo-connection.js';
import { startMongoServer, type MongoOptions } from '../../scripts/local-services.js';

const WRITES = Number(process.env.WRITES ?? 4000);

async function measure(backend: NonNullable<MongoOptions['backend']>, concurrency: number): Promise<number> {
  const server = await startMongoServer({ backend });
  const mongo = await connectMongo(`${server.url}/bench`);
  try {
    const rows = mongo.getClient().db().collection<{ _id: string; n: number; state: string }>('rows');
    await rows.insertOne({ _id: 'warm', n: 0, state: 'QUEUED' });
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < WRITES; i = next++) {
          // Half inserts, half conditional updates: the service's two kinds of writes.
          if (i % 2 === 0) await rows.insertOne({ _id: `r${i}`, n: i, state: 'QUEUED' });
          else await rows.updateOne({ _id: `r${i - 1}`, state: 'QUEUED' }, { $set: { state: 'SENT' } });
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return WRITES / seconds;
  } finally {
    await mongo.close();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'journal-bench-'));
  try {
    const results: Record<string, number> = {};
    for (const concurrency of [1, 10]) {
      for (let round = 0; round < 2; round += 1) {
        const journalFile = join(dir, `journal-${concurrency}-${round}.bson`);
        for (const [name, backend] of [
          ['memory', 'memory'],
          ['journal', { journalFile }],
        ] as const) {
          const rate = await measure(backend, concurrency);
          const key = `${name} c${concurrency}`;
          results[key] = Math.max(results[key] ?? 0, rate);
          process.stdout.write(`${key} round ${round + 1}: ${rate.toFixed(0)} writes/s\n`);
        }
        if (round === 1)
          process.stdout.write(`journal size after ${WRITES} writes: ${(statSync(journalFile).size / 1024).toFixed(0)} KiB\n`);
      }
    }
    process.stdout.write(
      `${JSON.stringify({ writesPerArm: WRITES, bestOfTwo: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(v)])) })}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
